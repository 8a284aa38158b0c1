package io.dlock.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.dlock.tck.mem.BrokenProviders;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The TCK tests itself: every deliberately broken provider ({@link BrokenProviders}) must fail
 * exactly the rules its bug breaks and pass (or skip) every other rule, and every rule must be
 * failed by at least one of them. A TCK that let a broken provider through, failed a correct one
 * for the wrong reason, or had a rule nothing can fail, is caught here.
 *
 * <p>The broken providers run a few at a time (their rules mostly sleep through lease times); the
 * randomized run of each lasts {@value #NEMESIS}.
 */
@Execution(ExecutionMode.SAME_THREAD)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TckSelfTest {

    private static final String NEMESIS = "PT6S";
    private static final int PARALLEL = Integer.getInteger("dlock.tck.selftest.parallel", 4);
    /**
     * When set, the broken providers to run (comma-separated schemes, e.g.
     * {@code broken-wait,broken-thread-per-wait}), for working on a few; the build runs them all.
     */
    private static final String ONLY = System.getProperty("dlock.tck.selftest.only", "");

    /** @return the broken providers this run checks: all, or those {@link #ONLY} names */
    private static List<BrokenProviders.Mutant> mutants() {
        if (ONLY.isBlank()) {
            return BrokenProviders.all();
        }
        Set<String> only = new TreeSet<>(List.of(ONLY.split(",")));
        return BrokenProviders.all().stream().filter(m -> only.contains(m.scheme())).toList();
    }
    /** The rules that count every thread of the JVM: each broken provider runs them alone. */
    private static final List<String> ALONE = List.of("L7", "L10", "L11");

    private ExecutorService pool;
    private final Map<String, Future<Map<Rule, TestExecutionResult.Status>>> runs = new ConcurrentHashMap<>();
    private final Map<Rule, Set<String>> caught = new ConcurrentHashMap<>();

    @BeforeAll
    void startAll() {
        pool = Executors.newFixedThreadPool(PARALLEL);
        List<Future<Map<Rule, TestExecutionResult.Status>>> parallel = new ArrayList<>();
        for (BrokenProviders.Mutant m : mutants()) {
            // L7, L10 and L11 count every thread of the JVM, so they run alone, after the parallel runs
            parallel.add(pool.submit(() -> run(m.scheme(), "-" + String.join(",-", ALONE))));
        }
        ExecutorService alone = Executors.newSingleThreadExecutor();
        List<BrokenProviders.Mutant> all = mutants();
        for (int i = 0; i < all.size(); i++) {
            Future<Map<Rule, TestExecutionResult.Status>> rest = parallel.get(i);
            String scheme = all.get(i).scheme();
            runs.put(scheme, alone.submit(() -> {
                for (Future<?> f : parallel) {
                    f.get(); // every parallel run done: no other client's threads are alive
                }
                Map<Rule, TestExecutionResult.Status> merged = new ConcurrentHashMap<>(rest.get());
                Map<Rule, TestExecutionResult.Status> byItself = run(scheme, String.join(",", ALONE));
                for (String id : ALONE) {
                    TestExecutionResult.Status status = byItself.get(Rule.valueOf(id));
                    if (status != null) {
                        merged.put(Rule.valueOf(id), status); // only these ran there; the others are disabled in that run
                    }
                }
                return merged;
            }));
        }
        alone.shutdown();
    }


    @AfterAll
    void stopAll() {
        pool.shutdownNow();
    }

    /** Runs both suites on one broken provider and returns rule -> outcome. */
    private static Map<Rule, TestExecutionResult.Status> run(String scheme, String rules) {
        Map<Rule, TestExecutionResult.Status> outcomes = new ConcurrentHashMap<>();
        Map<Rule, String> failures = new ConcurrentHashMap<>();
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectClass(BrokenProviderSuites.Contract.class), selectClass(BrokenProviderSuites.Faults.class))
                .configurationParameter(BrokenProviderSuites.SCHEME, scheme)
                .configurationParameter("dlock.tck.nemesis.duration", NEMESIS)
                .configurationParameter("dlock.tck.reportDir", "")
                .configurationParameter("dlock.tck.rules", rules)
                .build();
        Launcher launcher = LauncherFactory.create();
        launcher.execute(request, new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                id.getSource().filter(s -> s instanceof MethodSource).map(s -> (MethodSource) s)
                        .flatMap(m -> Rule.ofMethod(m.getMethodName())).ifPresent(rule -> {
                            // a rule checked by two methods (S7 in both suites) fails if either fails
                            outcomes.merge(rule, result.getStatus(), (a, b) ->
                                    a == TestExecutionResult.Status.FAILED ? a : b);
                            result.getThrowable().ifPresent(t -> failures.put(rule, String.valueOf(t.getMessage())));
                        });
            }

            @Override
            public void executionSkipped(TestIdentifier id, String reason) {
                id.getSource().filter(s -> s instanceof MethodSource).map(s -> (MethodSource) s)
                        .flatMap(m -> Rule.ofMethod(m.getMethodName()))
                        .ifPresent(rule -> outcomes.putIfAbsent(rule, TestExecutionResult.Status.ABORTED));
            }
        });
        StringBuilder out = new StringBuilder("[dlock-tck self-test] " + scheme + " (" + rules + "): "
                + new TreeMap<>(outcomes));
        failures.forEach((rule, message) -> out.append("\n[dlock-tck self-test]   ").append(scheme).append(' ').append(rule)
                .append(": ").append(message.split("\n", 2)[0]));
        System.out.println(out);
        return outcomes;
    }

    @TestFactory
    Stream<DynamicTest> everyBrokenProviderFailsExactlyItsRules() {
        return mutants().stream().map(m -> DynamicTest.dynamicTest(m.scheme() + ": " + m.bug(), () -> {
            Map<Rule, TestExecutionResult.Status> outcomes = runs.get(m.scheme()).get();
            Set<Rule> failed = new TreeSet<>();
            outcomes.forEach((rule, status) -> {
                if (status == TestExecutionResult.Status.FAILED) {
                    failed.add(rule);
                    caught.computeIfAbsent(rule, r -> ConcurrentHashMap.newKeySet()).add(m.scheme());
                }
            });
            Set<Rule> allowed = new TreeSet<>(m.caughtBy());
            allowed.addAll(m.mayAlsoFail());
            assertTrue(failed.containsAll(m.caughtBy()) && allowed.containsAll(failed), m.scheme() + " (" + m.bug()
                    + ") must fail " + new TreeSet<>(m.caughtBy()) + (m.mayAlsoFail().isEmpty() ? " exactly"
                    : ", may fail " + new TreeSet<>(m.mayAlsoFail()) + ", and no other") + "; failed " + failed
                    + "; outcomes: " + new TreeMap<>(outcomes));
            assertTrue(outcomes.size() >= Rule.values().length - 2, "every rule ran: " + outcomes.keySet());
        }));
    }

    @TestFactory
    Stream<DynamicTest> everyRuleIsFailedByABrokenProvider() {
        List<DynamicTest> tests = new ArrayList<>();
        for (Rule rule : Rule.values()) {
            tests.add(DynamicTest.dynamicTest(rule.name(), () -> {
                Set<String> by = new TreeSet<>();
                for (BrokenProviders.Mutant m : BrokenProviders.all()) {
                    if (m.caughtBy().contains(rule)) {
                        by.add(m.scheme());
                    }
                }
                assertTrue(!by.isEmpty(), rule + " is failed by no broken provider");
            }));
        }
        return tests.stream();
    }
}
