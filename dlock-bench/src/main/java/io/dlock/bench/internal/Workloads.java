package io.dlock.bench.internal;

import io.dlock.bench.BenchConfig;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.Set;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * The workloads, run against one contender at a time; each returns figures. Every workload opens
 * its own clients and closes them. A workload that fails throws; nothing is retried or hidden.
 */
public final class Workloads {

    /** Counts round trips between clients and the server (a proxy in front of it). */
    public interface RoundTripCounter {

        /** @return where clients connect to be counted */
        InetSocketAddress address();

        /** @return round trips so far */
        long roundTrips();
    }

    private static final int ROUND_TRIP_CYCLES = 200;
    /** Every hand-off workload stops when this many grants are recorded, however fast the backend. */
    private static final int MAX_GRANTS = 1 << 20;

    private final BenchConfig config;
    private final Consumer<String> progress;
    private final String runId;

    /**
     * @param config durations and sizes
     * @param progress where to say what is being measured
     * @param runId a tag that keeps the lock names of this run apart from other runs' (e.g. the fork)
     */
    public Workloads(BenchConfig config, Consumer<String> progress, String runId) {
        this.config = config;
        this.progress = progress;
        this.runId = runId;
    }

    /**
     * Uncontended acquire+release on one name per contender, one thread, one client each: p50
     * and p99. The contenders take turns in ten slices of the measured time, so that a drift of
     * the machine over the run falls on all of them alike.
     *
     * @param contenders the contenders
     * @param server their server or deployment
     * @return the figures of each contender, by name
     * @throws Exception if a contender fails
     */
    public Map<String, Map<Figure, Double>> uncontended(List<Contender> contenders, Deployment server)
            throws Exception {
        progress.accept("uncontended cycle, contenders taking turns");
        int slices = 10;
        List<Contender.Session> sessions = new ArrayList<>();
        try {
            List<Samples> samples = new ArrayList<>();
            for (Contender c : contenders) {
                Contender.Session s = c.connect(server, config.leaseTime());
                sessions.add(s);
                samples.add(new Samples());
                cycleFor(s, key("u", c), config.warmup(), null);
            }
            Duration slice = config.measure().dividedBy(slices);
            // a second warm-up in turns: the uncontended cycle is the headline figure, and the JIT
            // of a client on one CPU takes seconds to settle (each contender warms up 2x warmup)
            for (int c = 0; c < contenders.size(); c++) {
                cycleFor(sessions.get(c), key("u", contenders.get(c)), config.warmup(), null);
            }
            for (int i = 0; i < slices; i++) {
                for (int c = 0; c < contenders.size(); c++) {
                    cycleFor(sessions.get(c), key("u", contenders.get(c)), slice, samples.get(c));
                }
            }
            Map<String, Map<Figure, Double>> out = new LinkedHashMap<>();
            for (int c = 0; c < contenders.size(); c++) {
                Map<Figure, Double> f = new EnumMap<>(Figure.class);
                f.put(Figure.CYCLE_P50, samples.get(c).percentile(0.50) / 1_000.0);
                f.put(Figure.CYCLE_P99, samples.get(c).percentile(0.99) / 1_000.0);
                out.put(contenders.get(c).name(), f);
            }
            return out;
        } finally {
            closeAll(sessions);
        }
    }

    private String key(String workload, Contender c) {
        return "bench-" + workload + "-" + runId + "-" + c.name().replaceAll("[^A-Za-z0-9]", "");
    }

    /**
     * Round trips per uncontended cycle, counted by the counter clients connect through. Counts
     * over 200 cycles after 20 for warm-up, so an occasional keep-alive adds at most 0.005.
     *
     * @param c the contender
     * @param counter the counting proxy
     * @return the figure
     * @throws Exception if the contender fails
     */
    public Map<Figure, Double> roundTrips(Contender c, RoundTripCounter counter) throws Exception {
        progress.accept(c.name() + ": round trips");
        String key = "bench-r-" + runId;
        try (Contender.Session s = c.connect(Deployment.single(counter.address()), config.leaseTime())) {
            for (int i = 0; i < 20; i++) {
                s.acquire(key).release();
            }
            settle();
            long before = counter.roundTrips();
            for (int i = 0; i < ROUND_TRIP_CYCLES; i++) {
                s.acquire(key).release();
            }
            settle();
            long after = counter.roundTrips();
            return Map.of(Figure.ROUND_TRIPS, (after - before) / (double) ROUND_TRIP_CYCLES);
        }
    }

    /**
     * Contended hand-off: {@code waiters + 1} clients, one thread each, take turns on one name
     * with no work while holding, so that at every release {@code waiters} clients wait. The
     * hand-off is the time from the return of one client's release to the return of the next
     * client's acquire; a grant back to the client that just released (barging) is not a hand-off
     * and is counted apart.
     *
     * @param c the contender
     * @param server its server or deployment
     * @param waiters 2 or 16
     * @return the figures (p50, p99 and, for 16 waiters, the share of grants to another client)
     * @throws Exception if the contender fails
     */
    public Map<Figure, Double> handoff(Contender c, Deployment server, int waiters) throws Exception {
        progress.accept(c.name() + ": hand-off with " + waiters + " waiters");
        int clients = waiters + 1;
        String key = "bench-h" + waiters + "-" + runId;
        long[] acquiredAt = new long[MAX_GRANTS];
        long[] releasedAt = new long[MAX_GRANTS];
        int[] holder = new int[MAX_GRANTS];
        AtomicLong grants = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Contender.Session> sessions = new ArrayList<>();
        try {
            for (int i = 0; i < clients; i++) {
                sessions.add(c.connect(server, config.leaseTime()));
            }
            // warm every client up on the name, one at a time
            for (Contender.Session s : sessions) {
                s.acquire(key).release();
            }
            CyclicBarrier start = new CyclicBarrier(clients);
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                int me = i;
                Contender.Session s = sessions.get(i);
                Thread t = new Thread(() -> {
                    try {
                        start.await();
                        long measureFrom = System.nanoTime() + config.warmup().toNanos();
                        long end = measureFrom + config.measure().toNanos();
                        while (failure.get() == null) {
                            Contender.Held h = s.acquire(key);
                            long now = System.nanoTime();
                            long g = -1;
                            if (now >= measureFrom && now < end) {
                                g = grants.getAndIncrement();
                            }
                            if (g >= 0 && g < MAX_GRANTS) {
                                acquiredAt[(int) g] = now;
                                holder[(int) g] = me;
                            }
                            h.release();
                            if (g >= 0 && g < MAX_GRANTS) {
                                releasedAt[(int) g] = System.nanoTime();
                            }
                            if (System.nanoTime() >= end || grants.get() >= MAX_GRANTS) {
                                return;
                            }
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        failure.compareAndSet(null, e);
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "bench-handoff-" + i);
                t.setDaemon(true);
                threads.add(t);
                t.start();
            }
            long deadline = System.nanoTime() + config.warmup().plus(config.measure()).plusSeconds(60).toNanos();
            for (Thread t : threads) {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                if (t.isAlive()) {
                    throw new IllegalStateException(c.name() + ": a hand-off client is still blocked 60 s after the end");
                }
            }
            if (failure.get() != null) {
                throw new IllegalStateException(c.name() + ": hand-off failed", failure.get());
            }
            int n = (int) Math.min(grants.get(), MAX_GRANTS);
            Samples samples = new Samples();
            int handedOver = 0;
            // grants are numbered in the order they happened (the number is taken while holding)
            for (int g = 1; g < n; g++) {
                if (holder[g] != holder[g - 1]) {
                    handedOver++;
                    samples.add(acquiredAt[g] - releasedAt[g - 1]);
                }
            }
            Map<Figure, Double> out = new EnumMap<>(Figure.class);
            out.put(waiters == 2 ? Figure.HANDOFF_2_P50 : Figure.HANDOFF_16_P50, samples.percentile(0.50) / 1_000.0);
            out.put(waiters == 2 ? Figure.HANDOFF_2_P99 : Figure.HANDOFF_16_P99, samples.percentile(0.99) / 1_000.0);
            if (waiters != 2) {
                out.put(Figure.HANDOFF_16_SHARE, n <= 1 ? Double.NaN : 100.0 * handedOver / (n - 1));
            }
            return out;
        } finally {
            closeAll(sessions);
        }
    }

    /**
     * Throughput: threads sharing one client take and release locks on names picked at random
     * (seeded) from {@link BenchConfig#keys()}.
     *
     * @param c the contender
     * @param server its server or deployment
     * @param threads 1 or more
     * @return the figure
     * @throws Exception if the contender fails
     */
    public Map<Figure, Double> throughput(Contender c, Deployment server, int threads) throws Exception {
        progress.accept(c.name() + ": throughput over " + config.keys() + " keys, " + threads + " thread(s)");
        AtomicLong cycles = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (Contender.Session s = c.connect(server, config.leaseTime())) {
            CyclicBarrier start = new CyclicBarrier(threads + 1);
            List<Thread> workers = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                Random random = new Random(config.seed() + i);
                Thread t = new Thread(() -> {
                    try {
                        start.await();
                        long measureFrom = System.nanoTime() + config.warmup().toNanos();
                        long end = measureFrom + config.measure().toNanos();
                        long now;
                        while ((now = System.nanoTime()) < end && failure.get() == null) {
                            s.acquire("bench-t-" + runId + "-" + random.nextInt(config.keys())).release();
                            if (now >= measureFrom) {
                                cycles.incrementAndGet();
                            }
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        failure.compareAndSet(null, e);
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "bench-throughput-" + i);
                t.setDaemon(true);
                workers.add(t);
                t.start();
            }
            start.await();
            long limit = config.warmup().plus(config.measure()).plusSeconds(60).toMillis();
            for (Thread t : workers) {
                t.join(limit);
                if (t.isAlive()) {
                    throw new IllegalStateException(c.name() + ": a throughput thread is still busy 60 s after the end");
                }
            }
            if (failure.get() != null) {
                throw new IllegalStateException(c.name() + ": throughput failed", failure.get());
            }
            double perSecond = cycles.get() / (config.measure().toNanos() / 1e9);
            return Map.of(threads == 1 ? Figure.THROUGHPUT_1 : Figure.THROUGHPUT_16, perSecond);
        }
    }

    /**
     * Many held locks: one client takes {@link BenchConfig#heldLocks()} locks (16 threads
     * sharing it, each releasing its own), and holds them while requests are counted for
     * {@link BenchConfig#heldWindow()}; the heap retained per held lock and the threads the
     * client and the held locks add are measured in this JVM.
     *
     * @param c the contender
     * @param server its server or deployment, when no counter is given
     * @param counter the counting proxy clients connect through, or null (no renewal figure)
     * @return the figures
     * @throws Exception if the contender fails
     */
    public Map<Figure, Double> held(Contender c, Deployment server, RoundTripCounter counter) throws Exception {
        int n = config.heldLocks();
        progress.accept(c.name() + ": holding " + n + " locks");
        Map<Figure, Double> out = new EnumMap<>(Figure.class);
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        Set<Thread> threadsBefore = liveThreads();
        int workers = 16;
        CyclicBarrier warmed = new CyclicBarrier(workers + 1);
        CyclicBarrier go = new CyclicBarrier(workers + 1);
        CyclicBarrier acquired = new CyclicBarrier(workers + 1);
        CyclicBarrier release = new CyclicBarrier(workers + 1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong lost = new AtomicLong();
        try (Contender.Session s = c.connect(counter == null ? server : Deployment.single(counter.address()), config.leaseTime())) {
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                int first = w;
                // the names exist before the heap is measured: an application has them anyway
                List<String> names = new ArrayList<>();
                for (int i = first; i < n; i += workers) {
                    names.add("bench-l-" + runId + "-" + i);
                }
                Thread t = new Thread(() -> {
                    List<Contender.Held> mine = new ArrayList<>(names.size());
                    try {
                        // one cycle each first, so that pools sized by concurrency have grown before the count
                        s.acquire("bench-l-" + runId + "-warm-" + first).release();
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                        warmed.reset(); // the main thread and the other workers stop waiting, and fail
                        return;
                    }
                    try {
                        warmed.await();
                        go.await();
                        for (String name : names) {
                            if (failure.get() != null) {
                                break;
                            }
                            mine.add(s.acquire(name));
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                    try {
                        acquired.await();
                        release.await();
                        for (Contender.Held h : mine) {
                            try {
                                h.release();
                            } catch (Exception e) {
                                lost.incrementAndGet(); // expired while held: the library did not keep it alive
                            }
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        failure.compareAndSet(null, e);
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "bench-held-" + w);
                t.setDaemon(true);
                threads.add(t);
                t.start();
            }
            warmed.await(10, TimeUnit.MINUTES);
            Set<Thread> threadsClient = liveThreads();
            long heapBefore = usedHeapAfterGc(memory);
            go.await();
            acquired.await(10, TimeUnit.MINUTES);
            if (failure.get() != null) {
                release.await();
                throw new IllegalStateException(c.name() + ": taking " + n + " locks failed", failure.get());
            }
            Set<Thread> threadsHeld = liveThreads();
            long heapHeld = usedHeapAfterGc(memory);
            threadsClient.removeAll(threadsBefore);
            threadsHeld.removeAll(threadsBefore);
            int clientThreads = threadsClient.size();
            threadsHeld.removeAll(threadsClient);
            out.put(Figure.CLIENT_THREADS, (double) clientThreads);
            out.put(Figure.THREADS_FOR_HELD, (double) threadsHeld.size());
            out.put(Figure.HEAP_PER_LOCK, n == 0 ? Double.NaN : Math.max(0, heapHeld - heapBefore) / (double) n);
            if (counter != null && c.renews()) {
                // one renewal period to reach the steady state, then count
                Thread.sleep(config.leaseTime().toMillis() / 3);
                long before = counter.roundTrips();
                long t0 = System.nanoTime();
                Thread.sleep(config.heldWindow().toMillis());
                long after = counter.roundTrips();
                out.put(Figure.RENEWAL_RATE, (after - before) / ((System.nanoTime() - t0) / 1e9));
            }
            release.await(10, TimeUnit.MINUTES);
            for (Thread t : threads) {
                t.join(TimeUnit.MINUTES.toMillis(10));
            }
            if (failure.get() != null) {
                throw new IllegalStateException(c.name() + ": releasing " + n + " locks failed", failure.get());
            }
            if (c.renews()) {
                out.put(Figure.LOST_WHILE_HELD, (double) lost.get());
            }
        }
        return out;
    }

    private static void cycleFor(Contender.Session s, String key, Duration d, Samples samples) throws Exception {
        long end = System.nanoTime() + d.toNanos();
        long t0;
        while ((t0 = System.nanoTime()) < end) {
            s.acquire(key).release();
            if (samples != null) {
                samples.add(System.nanoTime() - t0);
            }
        }
    }

    /** Lets in-flight bytes reach the proxy before it is read. */
    private static void settle() throws InterruptedException {
        Thread.sleep(200);
    }

    /** Live threads, without the benchmark's own (its workers and the counting proxy's). */
    private static Set<Thread> liveThreads() {
        Set<Thread> live = new HashSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && !t.getName().startsWith("bench-") && !t.getName().startsWith("dlock-tck-proxy")) {
                live.add(t);
            }
        }
        return live;
    }

    private static long usedHeapAfterGc(MemoryMXBean memory) throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    private static void closeAll(List<Contender.Session> sessions) {
        RuntimeException first = null;
        for (Contender.Session s : sessions) {
            try {
                s.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
