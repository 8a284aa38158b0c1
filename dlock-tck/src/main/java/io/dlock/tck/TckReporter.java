package io.dlock.tck;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.AbstractMap;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;
import org.opentest4j.TestAbortedException;

/**
 * Records each rule's outcome, prints the hint of a failed rule, and at the end of a suite writes
 * the provider's results and regenerates the Markdown report when the system property
 * {@code dlock.tck.reportDir} names a directory (the project's build sets it).
 */
public final class TckReporter implements TestWatcher, AfterAllCallback {

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(TckReporter.class);

    /** Creates the extension (JUnit does this). */
    public TckReporter() { }

    @SuppressWarnings("unchecked")
    private static Map<Rule, Map.Entry<TckReport.Outcome, String>> results(ExtensionContext context) {
        ExtensionContext classContext = context.getTestMethod().isPresent() ? context.getParent().orElse(context) : context;
        return (Map<Rule, Map.Entry<TckReport.Outcome, String>>) classContext.getStore(NS)
                .getOrComputeIfAbsent("results", k -> new EnumMap<Rule, Map.Entry<TckReport.Outcome, String>>(Rule.class));
    }

    private static void record(ExtensionContext context, TckReport.Outcome outcome, String detail) {
        context.getTestMethod().flatMap(m -> Rule.ofMethod(m.getName())).ifPresent(rule -> {
            Map<Rule, Map.Entry<TckReport.Outcome, String>> results = results(context);
            synchronized (results) {
                Map.Entry<TckReport.Outcome, String> previous = results.get(rule);
                // a rule checked by several methods fails if any fails, and passes only if none was skipped
                if (previous == null || previous.getKey() == TckReport.Outcome.PASS && outcome != TckReport.Outcome.PASS
                        || previous.getKey() == TckReport.Outcome.SKIPPED && outcome == TckReport.Outcome.FAIL) {
                    results.put(rule, new AbstractMap.SimpleImmutableEntry<>(outcome, detail));
                }
            }
        });
    }

    private static String provider(ExtensionContext context) {
        return context.getTestInstance().filter(i -> i instanceof TckSupport)
                .map(i -> ((TckSupport) i).fixtureName()).orElse("unknown");
    }

    @Override
    public void testSuccessful(ExtensionContext context) {
        record(context, TckReport.Outcome.PASS, null);
    }

    @Override
    public void testAborted(ExtensionContext context, Throwable cause) {
        String why = cause instanceof TestAbortedException ? cause.getMessage() : String.valueOf(cause);
        if (why != null && why.startsWith("Assumption failed: ")) {
            why = why.substring("Assumption failed: ".length());
        }
        record(context, TckReport.Outcome.SKIPPED, why);
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        Optional<Rule> rule = context.getTestMethod().flatMap(m -> Rule.ofMethod(m.getName()));
        String first = String.valueOf(cause.getMessage()).split("\n", 2)[0];
        record(context, TckReport.Outcome.FAIL, first);
        rule.ifPresent(r -> System.out.println("[dlock-tck] " + provider(context) + " FAILED " + r + " (" + r.title()
                + "): " + first + "\n[dlock-tck]   if this fails, check: " + r.hint()));
    }

    @Override
    public void afterAll(ExtensionContext context) {
        Optional<Object> instance = context.getTestInstance();
        if (instance.isEmpty() || !(instance.get() instanceof TckSupport)) {
            return;
        }
        TckSupport tck = (TckSupport) instance.get();
        Map<Rule, Map.Entry<TckReport.Outcome, String>> results = results(context);
        StringBuilder summary = new StringBuilder("[dlock-tck] " + tck.fixtureName() + ":");
        results.forEach((rule, r) -> summary.append(' ').append(rule).append('=').append(r.getKey()));
        System.out.println(summary);
        String dir = context.getConfigurationParameter("dlock.tck.reportDir").orElse(null);
        if (dir == null || dir.isBlank() || !tck.reportable() || results.isEmpty()) {
            return;
        }
        Path reportDir = Path.of(dir).toAbsolutePath().normalize();
        // the suites of a parallel build (one JVM per module) update the report at once: the results and the
        // table written from them are one step under a lock that every JVM of this machine sees
        Path lockFile = Path.of(System.getProperty("java.io.tmpdir"), "dlock-tck-report-"
                + Integer.toHexString(reportDir.toString().hashCode()) + ".lock");
        synchronized (TckReporter.class) {
            try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                FileLock lock = channel.lock();
                try {
                    TckReport.writeResults(reportDir, tck.fixtureName(), results);
                    TckReport.writeMarkdown(reportDir, reportDir.resolveSibling("COMPATIBILITY.md"));
                } finally {
                    lock.release();
                }
            } catch (IOException e) {
                throw new UncheckedIOException("could not update the TCK report in " + reportDir, e);
            }
        }
    }
}
