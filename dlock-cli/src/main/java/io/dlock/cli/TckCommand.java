package io.dlock.cli;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.tck.Rule;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code dlock tck}: the compatibility kit against a live deployment. */
@Command(name = "tck", sortOptions = false, mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
        header = "Run the compatibility kit (TCK) against a live deployment.",
        description = {
            "Runs every TCK rule that needs no fault injection against the backend at --uri and prints rule -> "
                    + "pass/fail/skipped. Rules that need to freeze a client's network or stop the server are "
                    + "skipped: nothing is done to the deployment beyond taking and releasing locks named tck-*. "
                    + "A full run takes one to three minutes, depending on the lease time. docs/TCK.md explains "
                    + "every rule.",
            ""},
        footer = {"", "Example:", "  dlock tck --uri redis://127.0.0.1:6379 --lease 2s"})
final class TckCommand implements Callable<Integer> {

    @Mixin
    private BackendOptions backend;

    @Option(names = {"-l", "--lease"}, paramLabel = "DURATION", defaultValue = "2s", converter = Durations.class,
            description = "The lease time of the TCK's locks: short, so that the expiry rules run fast, but at least "
                    + "the backend's minimum (default: ${DEFAULT-VALUE}).")
    private Duration lease;

    @Option(names = {"-r", "--rules"}, paramLabel = "IDS", split = ",",
            description = "Only these rules, e.g. S1,S2,L1 (default: all).")
    private List<String> rules;

    @Option(names = "--seed", paramLabel = "N", description = "The seed of the TCK's randomness (default: the TCK's).")
    private Long seed;

    @Option(names = "--show-output", description = "Show what the TCK prints while it runs.")
    private boolean showOutput;

    @Override
    public Integer call() {
        PrintStream out = System.out;
        Set<Rule> wanted = wantedRules();
        // fail fast, with the CLI's messages, on a bad URI or a backend that does not answer
        try (LockClient probe = backend.open(LockOptions.builder().leaseTime(lease).build())) {
            probe.lock("tck-probe", LockOptions.builder().leaseTime(lease).build());
            probe.holder("tck-probe");
        } catch (UnsupportedOperationException e) {
            // no holder query: the rules that need one are skipped
        } catch (io.dlock.LockBackendException e) {
            throw BackendOptions.failure(backend.uri(), e);
        }
        if (seed != null) {
            System.setProperty("dlock.tck.seed", Long.toString(seed));
        }
        LiveTck.settings = new LiveTck.Settings(backend.uri(), lease, backend.operationTimeout());

        List<DiscoverySelector> selectors = new ArrayList<>();
        for (Method m : LiveTck.class.getMethods()) {
            Optional<Rule> rule = Rule.ofMethod(m.getName());
            if (m.isAnnotationPresent(Test.class) && rule.isPresent() && wanted.contains(rule.get())) {
                selectors.add(selectMethod(LiveTck.class, m));
            }
        }
        out.println("dlock tck: " + selectors.size() + " rules against " + backend.redactedUri() + ", lease "
                + Durations.format(lease) + ", operation timeout " + Durations.format(backend.operationTimeout()));

        Map<Rule, TestExecutionResult.Status> outcomes = new EnumMap<>(Rule.class);
        Map<Rule, String> details = new ConcurrentHashMap<>();
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request().selectors(selectors).build();
        Launcher launcher = LauncherFactory.create();
        PrintStream realOut = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        if (!showOutput) {
            System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        }
        long start = System.nanoTime();
        try {
            launcher.execute(request, new TestExecutionListener() {
                private final Map<String, Long> started = new ConcurrentHashMap<>();

                @Override
                public void executionStarted(TestIdentifier id) {
                    rule(id).ifPresent(r -> started.put(id.getUniqueId(), System.nanoTime()));
                }

                @Override
                public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                    rule(id).ifPresent(r -> {
                        TestExecutionResult.Status status = result.getStatus();
                        synchronized (outcomes) {
                            TestExecutionResult.Status previous = outcomes.get(r);
                            if (previous == null || status == TestExecutionResult.Status.FAILED) {
                                outcomes.put(r, status);
                            }
                        }
                        result.getThrowable().ifPresent(t -> details.put(r, firstLine(t.getMessage())));
                        long took = System.nanoTime() - started.getOrDefault(id.getUniqueId(), System.nanoTime());
                        realOut.printf(Locale.ROOT, "  %-4s %-7s %s (%s)%n", r, word(status), r.title(),
                                Durations.format(Duration.ofNanos(took)));
                    });
                    if (id.getSource().isEmpty() || !(id.getSource().get() instanceof MethodSource)) {
                        // a failure of the whole class (the fixture) shows here
                        result.getThrowable().filter(t -> result.getStatus() == TestExecutionResult.Status.FAILED)
                                .ifPresent(t -> realOut.println("  the suite failed: " + firstLine(String.valueOf(t))));
                    }
                }

                @Override
                public void executionSkipped(TestIdentifier id, String reason) {
                    rule(id).ifPresent(r -> {
                        outcomes.putIfAbsent(r, TestExecutionResult.Status.ABORTED);
                        details.put(r, reason);
                    });
                }
            });
        } finally {
            System.setOut(realOut);
        }

        out.println();
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"RULE", "RESULT", "DETAIL"});
        int failed = 0;
        int passed = 0;
        for (Map.Entry<Rule, TestExecutionResult.Status> e : outcomes.entrySet()) {
            TestExecutionResult.Status status = e.getValue();
            if (status == TestExecutionResult.Status.FAILED) {
                failed++;
            } else if (status == TestExecutionResult.Status.SUCCESSFUL) {
                passed++;
            }
            String detail = status == TestExecutionResult.Status.SUCCESSFUL ? e.getKey().title()
                    : details.getOrDefault(e.getKey(), "");
            if (detail.startsWith("Assumption failed: ")) {
                detail = detail.substring("Assumption failed: ".length());
            }
            rows.add(new String[] {e.getKey().name(), word(status), detail});
        }
        Table.print(out, rows);
        out.printf(Locale.ROOT, "%n%d passed, %d failed, %d skipped in %s%n", passed, failed,
                outcomes.size() - passed - failed, Durations.format(Duration.ofNanos(System.nanoTime() - start)));
        if (failed > 0 && !showOutput) {
            out.println("(run with --show-output to see what the TCK printed; docs/TCK.md explains each rule)");
        }
        if (outcomes.isEmpty()) {
            throw new CliException(ExitCodes.FAILED, "no rule ran");
        }
        return failed > 0 ? ExitCodes.FAILED : ExitCodes.OK;
    }

    private Set<Rule> wantedRules() {
        Set<Rule> wanted = new HashSet<>();
        if (rules == null || rules.isEmpty()) {
            wanted.addAll(List.of(Rule.values()));
            return wanted;
        }
        for (String id : rules) {
            try {
                wanted.add(Rule.valueOf(id.trim().toUpperCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw new CliException(ExitCodes.USAGE, "unknown rule '" + id + "'; rules are S1-S10, L1-L7, V1-V3, E1-E4");
            }
        }
        return wanted;
    }

    private static Optional<Rule> rule(TestIdentifier id) {
        return id.getSource().filter(s -> s instanceof MethodSource).map(s -> (MethodSource) s)
                .flatMap(m -> Rule.ofMethod(m.getMethodName()));
    }

    private static String word(TestExecutionResult.Status status) {
        return switch (status) {
            case SUCCESSFUL -> "pass";
            case FAILED -> "FAIL";
            case ABORTED -> "skipped";
        };
    }

    private static String firstLine(String s) {
        return s == null ? "" : s.split("\n", 2)[0];
    }
}
