package io.dlock.bench.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.bench.BenchConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import redis.clients.jedis.Jedis;

/**
 * Every contender of {@link Backend#REDLOCK}, against a real Redlock deployment (three
 * redis-servers on free loopback ports, as the comparison starts them): two clients exclude each
 * other, and a short run of the workloads gives a figure for each. dlock's {@code redlock://}
 * contender is one of them: it passes once dlock-redis has the Redlock mode.
 */
class RedlockContendersTest {

    private static final Duration LEASE = Duration.ofSeconds(4);
    /** Generous: a loaded 2-core machine can stall a client for seconds; no speed is asserted. */
    private static final long GRANT_BOUND_SECONDS = 30;

    private static LocalServer servers;

    @BeforeAll
    static void start() {
        servers = LocalServer.start(Backend.REDLOCK);
    }

    @AfterAll
    static void stop() {
        if (servers != null) {
            servers.close();
        }
    }

    static Stream<String> contenders() {
        return Backend.REDLOCK.contenders(LEASE).stream().map(Contender::name);
    }

    private static Contender contender(String name) {
        return Backend.REDLOCK.contenders(LEASE).stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("contenders")
    void aSecondClientGetsTheLockOnlyAfterTheFirstReleasesIt(String name) throws Exception {
        Contender c = contender(name);
        Deployment d = servers.deployment();
        assertEquals(3, d.addresses().size());
        String key = "bench-test-x-" + name.replaceAll("[^A-Za-z0-9]", "");
        try (Contender.Session first = c.connect(d, LEASE); Contender.Session second = c.connect(d, LEASE)) {
            Contender.Held held = first.acquire(key);
            if (c instanceof io.dlock.bench.internal.peers.RawRedlockContender) {
                assertTrue(nodesHolding(key) >= 2, "the floor holds its key on a majority of the three nodes");
            }
            CountDownLatch granted = new CountDownLatch(1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            // the second client takes and releases on its own thread: Redisson's locks belong to a thread
            Thread t = new Thread(() -> {
                try {
                    Contender.Held h = second.acquire(key);
                    granted.countDown();
                    h.release();
                } catch (Throwable e) {
                    failure.set(e);
                }
            }, "bench-test-second");
            t.setDaemon(true);
            t.start();
            assertFalse(granted.await(500, TimeUnit.MILLISECONDS), name + ": the second client got a held lock");
            held.release();
            assertTrue(granted.await(GRANT_BOUND_SECONDS, TimeUnit.SECONDS), name + ": the second client never got the released lock");
            t.join(TimeUnit.SECONDS.toMillis(GRANT_BOUND_SECONDS));
            assertNull(failure.get(), () -> name + ": " + failure.get());
        }
        if (c instanceof io.dlock.bench.internal.peers.RawRedlockContender) {
            assertEquals(0, nodesHolding(key), "the floor's release deleted its key on every node");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("contenders")
    void theWorkloadsGiveAFigureForEachMeasure(String name) throws Exception {
        Contender c = contender(name);
        Deployment d = servers.deployment();
        BenchConfig config = BenchConfig.builder().warmup(Duration.ofMillis(100)).measure(Duration.ofMillis(500))
                .leaseTime(LEASE).heldLocks(200).threads(4).build();
        List<String> progress = new ArrayList<>();
        Workloads w = new Workloads(config, progress::add, "t" + Long.toHexString(System.nanoTime()));
        Map<Figure, Double> cycle = w.uncontended(List.of(c), d).get(name);
        assertTrue(cycle.get(Figure.CYCLE_P50) > 0, name + ": " + cycle);
        assertTrue(cycle.get(Figure.CYCLE_P99) >= cycle.get(Figure.CYCLE_P50), name + ": " + cycle);
        if (c.waits()) {
            Map<Figure, Double> handoff = w.handoff(c, d, 2);
            assertFalse(handoff.get(Figure.HANDOFF_2_P50).isNaN(), name + ": no hand-off between the 3 clients in 500 ms: " + handoff);
        }
        Map<Figure, Double> throughput = w.throughput(c, d, config.threads());
        assertTrue(throughput.get(Figure.THROUGHPUT_16) > 0, name + ": " + throughput);
        Map<Figure, Double> held = w.held(c, d, null);
        assertFalse(held.get(Figure.HEAP_PER_LOCK).isNaN(), name + ": " + held);
        assertFalse(held.containsKey(Figure.RENEWAL_RATE), "no counting proxy on a deployment of several nodes: " + held);
        if (c.renews()) {
            assertEquals(0.0, held.get(Figure.LOST_WHILE_HELD), name + ": locks lost while held: " + held);
        }
        assertFalse(progress.isEmpty());
    }

    private static int nodesHolding(String key) {
        int n = 0;
        for (var a : servers.deployment().addresses()) {
            try (Jedis j = new Jedis(a.getHostString(), a.getPort())) {
                n += j.exists(key) ? 1 : 0;
            }
        }
        return n;
    }
}
