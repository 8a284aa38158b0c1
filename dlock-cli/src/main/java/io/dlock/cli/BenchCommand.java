package io.dlock.cli;

import io.dlock.LockBackendException;
import io.dlock.LockOptions;
import io.dlock.bench.Bench;
import io.dlock.bench.BenchConfig;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code dlock bench}: dlock's benchmark workloads against the user's own deployment. */
@Command(name = "bench", sortOptions = false, mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
        header = "Measure dlock against your own backend.",
        description = {
            "Runs the workloads of dlock's side-by-side benchmark with dlock alone against the backend at --uri: "
                    + "uncontended acquire+release latency (p50, p99), hand-off from one client to the next with 2 and "
                    + "16 waiting clients, throughput over --keys lock names with 1 and --threads threads, and one "
                    + "client holding --held locks (heap per held lock, threads, locks lost). Lock names start with "
                    + "'bench-' and a random run id; every lock is released at the end. It starts up to 17 clients "
                    + "at once, so point it at a test deployment or a quiet hour. The comparison with other "
                    + "libraries is ./scripts/bench in the source tree (docs/BENCHMARKS.md).",
            ""},
        footer = {"", "Example:", "  dlock bench --uri redis://127.0.0.1:6379 --measure 5s --held 1000"})
final class BenchCommand implements Callable<Integer> {

    @Mixin
    private BackendOptions backend;

    @Option(names = "--warmup", paramLabel = "DURATION", defaultValue = "2s", converter = Durations.class,
            description = "Warm-up before each workload (default: ${DEFAULT-VALUE}).")
    private Duration warmup;

    @Option(names = "--measure", paramLabel = "DURATION", defaultValue = "2s", converter = Durations.class,
            description = "How long each workload is measured (default: ${DEFAULT-VALUE}).")
    private Duration measure;

    @Option(names = "--lease", paramLabel = "DURATION", defaultValue = "4s", converter = Durations.class,
            description = "The lease time locks are taken with, at least 2s (default: ${DEFAULT-VALUE}).")
    private Duration lease;

    @Option(names = "--held", paramLabel = "N", defaultValue = "1000",
            description = "Locks one client holds at once for the heap and thread figures; 0 skips them "
                    + "(default: ${DEFAULT-VALUE}).")
    private int held;

    @Option(names = "--keys", paramLabel = "N", defaultValue = "1000",
            description = "Lock names the throughput workload picks from (default: ${DEFAULT-VALUE}).")
    private int keys;

    @Option(names = "--threads", paramLabel = "N", defaultValue = "16",
            description = "Threads of the contended throughput workload (default: ${DEFAULT-VALUE}).")
    private int threads;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "20261122",
            description = "Seed of the random lock names of the throughput workload (default: ${DEFAULT-VALUE}).")
    private long seed;

    @Override
    public Integer call() throws InterruptedException {
        BenchConfig config;
        try {
            config = BenchConfig.builder().warmup(warmup).measure(measure).leaseTime(lease).heldLocks(held).keys(keys)
                    .threads(threads).seed(seed).build();
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, e.getMessage());
        }
        // a bad URI or an unreachable backend fails here, with the command's exit statuses
        backend.open(LockOptions.defaults()).close();
        String uri = backend.uri();
        PrintStream err = System.err;
        err.println("dlock bench: " + backend.redactedUri() + ", " + config);
        List<Bench.Measurement> results;
        try {
            results = Bench.run(uri, config, s -> err.println("dlock bench: " + s));
        } catch (LockBackendException e) {
            throw BackendOptions.failure(uri, e);
        } catch (IllegalStateException e) {
            if (e.getCause() instanceof LockBackendException lbe) {
                throw BackendOptions.failure(uri, lbe);
            }
            throw e;
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"FIGURE", "VALUE"});
        for (Bench.Measurement m : results) {
            rows.add(new String[] {m.label(), m.formatted()});
        }
        Table.print(System.out, rows);
        return ExitCodes.OK;
    }
}
