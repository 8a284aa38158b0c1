package io.dlock.bench.internal;

import io.dlock.bench.BenchConfig;
import io.dlock.bench.internal.peers.DynamoDbRequestCost;
import io.dlock.bench.internal.peers.EtcdRequestCost;
import io.dlock.tck.TcpProxy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One fork of the comparison: a fresh JVM that measures every contender of one backend against
 * a server the parent started, and prints each figure as a line
 * {@code RESULT<tab>contender<tab>FIGURE<tab>value} on standard output (progress goes to
 * standard error). Workloads run one after another, and within a workload the contenders take
 * turns, so that a slow drift of the machine spreads over all of them.
 */
public final class ForkMain {

    private ForkMain() { }

    /**
     * @param args {@code backend deployment fork warmupMillis measureMillis leaseMillis heldLocks seed}, the
     *     deployment as {@link Deployment#toArgument()} writes it
     * @throws Exception if a workload fails: the fork then exits non-zero
     */
    public static void main(String[] args) throws Exception {
        Backend backend = Backend.of(args[0]);
        Deployment deployment = Deployment.parse(args[1]);
        int fork = Integer.parseInt(args[2]);
        BenchConfig config = BenchConfig.builder()
                .warmup(Duration.ofMillis(Long.parseLong(args[3])))
                .measure(Duration.ofMillis(Long.parseLong(args[4])))
                .leaseTime(backend.leaseTime(Duration.ofMillis(Long.parseLong(args[5]))))
                .heldLocks(Integer.parseInt(args[6]))
                .seed(Long.parseLong(args[7]))
                .build();
        String runId = "f" + fork + "-" + Long.toHexString(System.nanoTime());
        Workloads w = new Workloads(config, s -> System.err.println("[bench] " + backend.title() + " fork " + fork + ": " + s),
                runId);
        // -Ddlock.bench.skip=NAME,NAME (Comparison's --skip): leave those contenders out
        List<String> skip = List.of(System.getProperty("dlock.bench.skip", "").split(","));
        List<Contender> contenders = new ArrayList<>(backend.contenders(config.leaseTime()));
        contenders.removeIf(c -> skip.contains(c.name()));
        // one server: a counting proxy in front of it; several nodes: none (Backend.notCountedBecause)
        try (TcpProxy proxy = deployment.multiNode() ? null : TcpProxy.start(deployment.server())) {
            Workloads.RoundTripCounter counter = proxy == null ? null : new Workloads.RoundTripCounter() {
                @Override
                public InetSocketAddress address() {
                    return proxy.address();
                }

                @Override
                public long roundTrips() {
                    return proxy.roundTrips();
                }
            };
            // -Ddlock.bench.only=held: only the held-locks workload (for looking into one figure)
            boolean onlyHeld = "held".equals(System.getProperty("dlock.bench.only"));
            if (!onlyHeld) {
                for (Map.Entry<String, Map<Figure, Double>> e : w.uncontended(contenders, deployment).entrySet()) {
                    print(e.getKey(), e.getValue());
                }
            }
            List<Step> steps = new ArrayList<>();
            if (!onlyHeld) {
                if (counter != null) {
                    steps.add(c -> w.roundTrips(c, counter));
                }
                steps.add(c -> c.waits() ? w.handoff(c, deployment, 2) : Map.of());
                steps.add(c -> c.waits() ? w.handoff(c, deployment, 16) : Map.of());
                steps.add(c -> w.throughput(c, deployment, 1));
                steps.add(c -> w.throughput(c, deployment, config.threads()));
            }
            if (config.heldLocks() > 0) {
                steps.add(c -> w.held(c, deployment, counter));
            }
            if ((backend == Backend.DYNAMODB || backend == Backend.ETCD) && fork == 0 && !onlyHeld) {
                System.err.println("[bench] " + backend.title() + " fork 0: the cost of each request kind");
                InetSocketAddress server = deployment.server();
                Map<String, Double> costs = backend == Backend.DYNAMODB
                        ? DynamoDbRequestCost.measure(server, config.warmup(), config.measure().multipliedBy(2))
                        : EtcdRequestCost.measure(server, config.warmup(), config.measure().multipliedBy(2));
                for (Map.Entry<String, Double> e : costs.entrySet()) {
                    System.out.println("REQUEST\t" + e.getKey() + "\t" + String.format(Locale.ROOT, "%.1f", e.getValue()));
                }
            }
            for (Step step : steps) {
                for (Contender c : contenders) {
                    print(c.name(), step.run(c));
                }
            }
        }
        System.exit(0);
    }

    private static void print(String contender, Map<Figure, Double> figures) {
        for (Map.Entry<Figure, Double> e : figures.entrySet()) {
            System.out.println("RESULT\t" + contender + "\t" + e.getKey().name() + "\t"
                    + String.format(Locale.ROOT, "%.3f", e.getValue()));
        }
        System.out.flush();
    }

    private interface Step {
        Map<Figure, Double> run(Contender c) throws Exception;
    }
}
