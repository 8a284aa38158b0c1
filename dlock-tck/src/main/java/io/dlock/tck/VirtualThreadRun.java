package io.dlock.tck;

import io.dlock.spi.support.Arguments;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import io.dlock.Lease;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

/**
 * Runs many virtual threads contending through one client, in a child JVM of Java 21 or later
 * (dlock is compiled for 17, where virtual threads do not exist): each thread acquires one of a
 * set of locks, checks that nobody else holds it, and releases it. The child prints the figures
 * and exits 0 only if every thread got its lock, no two holders overlapped, and the JVM's
 * platform threads stayed within a bound that does not grow with the number of virtual threads:
 * a client whose threads grew with its waiters would exceed it.
 *
 * <p>The child's class path is the calling test's (Surefire's {@code surefire.test.class.path}).
 * Stateless and thread-safe.
 */
public final class VirtualThreadRun {

    private VirtualThreadRun() { }

    /**
     * What the child printed and how it ended.
     *
     * @param exitCode 0 when every check passed
     * @param output what it printed, both streams
     */
    public record Result(int exitCode, String output) {

        /**
         * @throws IllegalArgumentException if {@code output} is {@code null}
         */
        public Result {
            Arguments.notNull("output", output);
        }
    }

    /**
     * Finds a Java 21 or later: the {@code dlock.test.jdk21} system property or environment
     * variable {@code DLOCK_TEST_JDK21} (a JDK's home), else the newest JDK of 21 or later under
     * {@code /usr/lib/jvm}.
     *
     * @return the {@code java} launcher, or empty if there is none
     */
    public static Optional<Path> java21() {
        String configured = System.getProperty("dlock.test.jdk21", System.getenv("DLOCK_TEST_JDK21"));
        if (configured != null && !configured.isBlank()) {
            Path java = Path.of(configured, "bin", "java");
            return Files.isExecutable(java) ? Optional.of(java) : Optional.empty();
        }
        Path jvms = Path.of("/usr/lib/jvm");
        if (!Files.isDirectory(jvms)) {
            return Optional.empty();
        }
        try (Stream<Path> homes = Files.list(jvms)) {
            return homes.filter(h -> feature(h) >= 21).sorted((a, b) -> feature(b) - feature(a))
                    .map(h -> h.resolve("bin").resolve("java")).filter(Files::isExecutable).findFirst();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** @return the feature version a JDK home's {@code release} file names, or 0 */
    private static int feature(Path home) {
        try {
            for (String line : Files.readAllLines(home.resolve("release"), StandardCharsets.UTF_8)) {
                if (line.startsWith("JAVA_VERSION=")) {
                    String v = line.substring("JAVA_VERSION=".length()).replace("\"", "");
                    return Integer.parseInt(v.split("[.+-]")[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0;
        }
        return 0;
    }

    /** How many virtual threads {@link #check} runs. */
    public static final int THREADS = 10_000;
    /** Over how many locks {@link #check} spreads them. */
    public static final int LOCKS = 100;
    /**
     * The most platform threads {@link #check} allows in the child's JVM: carriers, the client's
     * timer and workers, the backend's connection threads and the JVM's own, with room to spare;
     * a thread per waiting virtual thread would be 100 times more.
     */
    public static final int MAX_PLATFORM_THREADS = 64;

    /**
     * Runs {@value #THREADS} virtual threads through one client on {@value #LOCKS} locks and
     * asserts that all were granted, none overlapped, and platform threads stayed at most
     * {@value #MAX_PLATFORM_THREADS}. Skipped (a JUnit assumption) without a Java 21 or later.
     *
     * @param uri the backend
     * @throws org.opentest4j.AssertionFailedError if a check fails, with the child's output
     */
    public static void check(String uri) {
        Arguments.notNull("uri", uri);
        Optional<Path> java = java21();
        org.junit.jupiter.api.Assumptions.assumeTrue(java.isPresent(),
                "no Java 21 or later under /usr/lib/jvm (set dlock.test.jdk21 to a JDK's home)");
        Result r = run(java.get(), uri, THREADS, LOCKS, MAX_PLATFORM_THREADS, Duration.ofMinutes(3));
        System.out.println(r.output());
        org.junit.jupiter.api.Assertions.assertEquals(0, r.exitCode(), r.output());
        org.junit.jupiter.api.Assertions.assertTrue(r.output().contains(THREADS + " grants"), r.output());
    }

    /**
     * Runs the child.
     *
     * @param java a Java 21 or later launcher, from {@link #java21()}
     * @param uri the backend
     * @param threads how many virtual threads, each acquiring once
     * @param locks over how many locks they spread
     * @param maxPlatformThreads the most platform threads the child's JVM may have at once
     * @param timeout how long the whole run may take
     * @return the child's result
     * @throws IllegalStateException if the child does not end in time (it is killed), or on
     *     interrupt (flag kept)
     * @throws UncheckedIOException if it cannot be started
     */
    public static Result run(Path java, String uri, int threads, int locks, int maxPlatformThreads, Duration timeout) {
        Arguments.notNull("java", java);
        Arguments.notNull("uri", uri);
        Arguments.notNull("timeout", timeout);
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = List.of(java.toString(), "-cp", classPath, VirtualThreadRun.class.getName(), uri,
                Integer.toString(threads), Integer.toString(locks), Integer.toString(maxPlatformThreads),
                Long.toString(timeout.toMillis()));
        try {
            Path log = Files.createTempFile("dlock-vt-", ".log");
            try {
                Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
                if (!p.waitFor(timeout.toMillis() + 30_000, TimeUnit.MILLISECONDS)) {
                    p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                    throw new IllegalStateException("the virtual-thread child did not end within " + timeout
                            + " + 30 s; its output:\n" + Files.readString(log, StandardCharsets.UTF_8));
                }
                return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
            } finally {
                Files.deleteIfExists(log);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not run the virtual-thread child", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the virtual-thread child", e);
        }
    }

    /** @return the live platform threads counted by name, digits folded: {@code dlock-1-worker-# x3, ...} */
    private static String threadGroups() {
        java.util.Map<String, Integer> groups = new java.util.TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) { // platform threads only
            groups.merge(t.getName().replaceAll("[0-9]+", "#"), 1, Integer::sum);
        }
        StringBuilder b = new StringBuilder();
        groups.forEach((name, n) -> b.append(b.length() == 0 ? "" : ", ").append(name).append(n > 1 ? " x" + n : ""));
        return b.toString();
    }

    /**
     * The child's side of {@link #run}.
     *
     * @param args the URI, threads, locks, the platform-thread bound and the timeout in ms
     * @throws Exception if the run cannot start
     */
    public static void main(String[] args) throws Exception {
        String uri = args[0];
        int threads = Integer.parseInt(args[1]);
        int locks = Integer.parseInt(args[2]);
        int maxPlatform = Integer.parseInt(args[3]);
        long timeoutMillis = Long.parseLong(args[4]);
        Method perTask = Executors.class.getMethod("newVirtualThreadPerTaskExecutor");
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        AtomicInteger peak = new AtomicInteger(mx.getThreadCount());
        AtomicBoolean sampling = new AtomicBoolean(true);
        AtomicReference<String> atPeak = new AtomicReference<>("");
        Thread sampler = new Thread(() -> {
            while (sampling.get()) {
                int now = mx.getThreadCount(); // platform threads only
                if (now > peak.get()) {
                    peak.set(now);
                    atPeak.set(threadGroups());
                }
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "dlock-vt-sampler");
        sampler.setDaemon(true);
        sampler.start();
        int before = mx.getThreadCount();
        AtomicInteger granted = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger failures = new AtomicInteger();
        AtomicLong longestWait = new AtomicLong();
        AtomicBoolean[] held = new AtomicBoolean[locks];
        for (int i = 0; i < locks; i++) {
            held[i] = new AtomicBoolean();
        }
        // a short lease every backend accepts (a ZooKeeper lease is bounded by its session)
        LockOptions options = LockOptions.builder().leaseTime(Duration.ofSeconds(2)).build();
        long start = System.nanoTime();
        int open;
        int exit = 1;
        try (LockClient client = LockClient.open(LockClientConfig.builder(uri).build())) {
            open = mx.getThreadCount();
            ExecutorService vts = (ExecutorService) perTask.invoke(null);
            try {
                for (int t = 0; t < threads; t++) {
                    int lock = t % locks;
                    vts.execute(() -> {
                        long asked = System.nanoTime();
                        try {
                            Optional<Lease> lease = client.lock("vt-" + lock, options).tryAcquire(Duration.ofMillis(timeoutMillis));
                            if (lease.isEmpty()) {
                                failures.incrementAndGet();
                                return;
                            }
                            longestWait.accumulateAndGet(System.nanoTime() - asked, Math::max);
                            if (!held[lock].compareAndSet(false, true)) {
                                overlaps.incrementAndGet();
                            }
                            granted.incrementAndGet();
                            held[lock].set(false);
                            lease.get().release();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            failures.incrementAndGet();
                        } catch (RuntimeException e) {
                            if (failures.incrementAndGet() <= 3) {
                                System.out.println("[vt] " + e);
                            }
                        }
                    });
                }
            } finally {
                vts.shutdown();
            }
            if (!vts.awaitTermination(timeoutMillis + 10_000, TimeUnit.MILLISECONDS)) {
                System.out.println("[vt] FAILED: the virtual threads did not all end in time");
            }
            sampling.set(false);
            long took = System.nanoTime() - start;
            System.out.println("[vt] " + threads + " virtual threads on " + locks + " locks through one client (" + client
                    + "): " + granted + " grants, " + failures + " failures, " + overlaps + " overlaps in "
                    + TimeUnit.NANOSECONDS.toMillis(took) + " ms, longest wait " + TimeUnit.NANOSECONDS.toMillis(longestWait.get())
                    + " ms; platform threads: " + before + " before the client, " + open + " after opening it, peak "
                    + peak.get() + " (bound " + maxPlatform + "; at the peak: " + atPeak.get() + "), " + Runtime.getRuntime().availableProcessors()
                    + " processors, Java " + Runtime.version());
            boolean ok = granted.get() == threads && failures.get() == 0 && overlaps.get() == 0 && peak.get() <= maxPlatform;
            System.out.println(ok ? "[vt] every check passed" : "[vt] FAILED");
            exit = ok ? 0 : 1;
        } catch (RuntimeException e) {
            System.out.println("[vt] FAILED: " + e);
        }
        System.out.flush();
        Runtime.getRuntime().halt(exit); // no wait for a backend's stray non-daemon thread: the figures are out
    }

}
