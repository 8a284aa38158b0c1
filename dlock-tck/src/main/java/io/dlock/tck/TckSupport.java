package io.dlock.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.Capability;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The machinery every TCK rule class shares: the fixture's lifecycle (one per class run), clients
 * that are closed after each test, names unique per test, the seed, and small helpers. Not a
 * suite by itself: provider authors subclass {@link LockProviderTck}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.MethodName.class)
@ExtendWith({TckSettings.class, TckReporter.class})
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class TckSupport {

    /** Only this kit's suites extend it: a provider author extends {@link LockProviderTck} or {@link FaultToleranceTck}. */
    TckSupport() { }

    /** The default seed of the TCK's randomness. */
    public static final long DEFAULT_SEED = 20261121L;

    private TckFixture fixture;
    /** Clients and other resources opened by the current test, closed after it in reverse order. */
    protected final List<AutoCloseable> opened = new CopyOnWriteArrayList<>();
    private final AtomicInteger names = new AtomicInteger();
    private long seed;

    /** @return the seed of this run's randomness */
    protected final long seed() {
        return seed;
    }

    /**
     * Creates the fixture for this run; called once, before the first rule.
     *
     * @return the fixture
     */
    protected abstract TckFixture createFixture();

    /** Where settings come from: the run's JUnit configuration parameters, then system properties. */
    private volatile java.util.function.Function<String, Optional<String>> settings = key -> Optional.ofNullable(
            System.getProperty(key));

    final void useSettings(java.util.function.Function<String, Optional<String>> source) {
        this.settings = source;
    }

    /**
     * Reads a setting of this run: a JUnit Platform configuration parameter (set per run, e.g. by
     * {@code LauncherDiscoveryRequestBuilder.configurationParameter}, or in
     * {@code junit-platform.properties}), or else a system property of the same name. The TCK's
     * own settings are {@code dlock.tck.seed}, {@code dlock.tck.rules}, {@code dlock.tck.reportDir}
     * and {@code dlock.tck.nemesis.duration}; a fixture may read its own.
     *
     * @param key the setting's name
     * @return its value, if set
     */
    protected final Optional<String> setting(String key) {
        return settings.apply(key).filter(v -> !v.isBlank());
    }

    @BeforeAll
    final void startFixture() {
        seed = setting("dlock.tck.seed").map(Long::parseLong).orElse(DEFAULT_SEED);
        fixture = createFixture();
        fixture.useSeed(seed);
        System.out.println("[dlock-tck] provider " + fixture.name() + ", lease time " + fixture.leaseTime()
                + ", operation timeout " + fixture.operationTimeout() + ", seed " + seed
                + " (set dlock.tck.seed to change)" + setting("dlock.tck.rules").map(r -> ", rules " + r).orElse(""));
    }

    @AfterEach
    final void closeClients() {
        List<AutoCloseable> toClose = new ArrayList<>(opened);
        opened.clear();
        Collections.reverse(toClose);
        for (AutoCloseable c : toClose) {
            try {
                c.close();
            } catch (Exception e) {
                System.out.println("[dlock-tck] closing a client failed: " + e);
            }
        }
    }

    @AfterAll
    final void stopFixture() {
        if (fixture != null) {
            fixture.close();
        }
    }

    final String fixtureName() {
        return fixture == null ? getClass().getSimpleName() : fixture.name();
    }

    final boolean reportable() {
        return fixture != null && fixture.reportable();
    }

    // ------------------------------------------------------------------ helpers

    /** @return the fixture of this run */
    protected final TckFixture fixture() {
        return fixture;
    }

    /** @return the fixture's lease time, used by every lock of the rules */
    protected final Duration lease() {
        return fixture.leaseTime();
    }

    /** @return the fixture's operation timeout */
    protected final Duration opTimeout() {
        return fixture.operationTimeout();
    }

    /** @return options with the fixture's lease time and automatic renewal */
    protected final LockOptions options() {
        return LockOptions.builder().leaseTime(lease()).build();
    }

    /**
     * Options with a lease many times the fixture's, renewed, so that only a release (never an
     * expiry) can free the lock within the rule's waits; a backend whose leases are bounded by its
     * session gets its longest lease instead, found by asking for less until one is accepted.
     *
     * @param client the client whose backend decides the bound
     * @param times how many lease times
     * @return the options
     */
    protected final LockOptions longLease(LockClient client, int times) {
        return longLease(client, times, true);
    }

    /**
     * As {@link #longLease(LockClient, int)}, with or without automatic renewal.
     *
     * @param client the client whose backend decides the bound
     * @param times how many lease times
     * @param autoRenew whether the lease is renewed
     * @return the options
     */
    protected final LockOptions longLease(LockClient client, int times, boolean autoRenew) {
        for (int t = times; t > 1; t = t / 2) {
            LockOptions o = LockOptions.builder().leaseTime(lease().multipliedBy(t)).autoRenew(autoRenew).build();
            try {
                client.lock("tck-lease-probe", o);
                return o;
            } catch (IllegalArgumentException e) {
                // above the backend's maximum: try half
            }
        }
        return autoRenew ? options() : noRenew();
    }

    /** @return options with the fixture's lease time and no renewal */
    protected final LockOptions noRenew() {
        return LockOptions.builder().leaseTime(lease()).autoRenew(false).build();
    }

    /** @return the fixture's client configuration with the TCK's timeout, options and short retry interval */
    protected final LockClientConfig.Builder config() {
        return fixture.clientConfig().operationTimeout(opTimeout()).defaultLockOptions(options())
                .retry(Duration.ofMillis(10), Duration.ofMillis(250));
    }

    /**
     * Opens a client that the TCK closes after the test.
     *
     * @return the client
     */
    protected final LockClient client() {
        return client(UnaryOperator.identity());
    }

    /**
     * Opens a client with an adjusted configuration; the TCK closes it after the test.
     *
     * @param customize changes to the configuration
     * @return the client
     */
    protected final LockClient client(UnaryOperator<LockClientConfig.Builder> customize) {
        LockClient c = LockClient.open(customize.apply(config()).build());
        opened.add(c);
        return c;
    }

    /**
     * Opens a freezable client, or skips the test if the fixture cannot make one.
     *
     * @param rule the rule, for the skip message
     * @return the client, closed after the test
     */
    protected final FreezableClient freezable(String rule) {
        Optional<FreezableClient> c = fixture.openFreezable(config());
        assumeTrue(c.isPresent(), rule + " needs TckFixture.openFreezable (a client whose network can be frozen); "
                + "the fixture offers none");
        opened.add(c.get());
        return c.get();
    }

    /**
     * Makes a lock name unique to this call.
     *
     * @param rule the rule using it
     * @return the name
     */
    protected final String name(Rule rule) {
        return "tck-" + rule.name().toLowerCase() + "-" + names.incrementAndGet() + "-" + System.nanoTime();
    }

    /**
     * Converts for messages.
     *
     * @param nanos nanoseconds
     * @return milliseconds
     */
    protected static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    /**
     * Sleeps; an interrupt fails the test (and keeps the flag).
     *
     * @param d how long
     */
    protected static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("interrupted");
        }
    }

    /**
     * Polls a condition every 5 ms until it holds or the timeout passes.
     *
     * @param condition the condition
     * @param timeout how long to wait at most
     * @return whether the condition held
     */
    protected static boolean await(BooleanSupplier condition, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() - deadline < 0) {
            if (condition.getAsBoolean()) {
                return true;
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return condition.getAsBoolean();
    }

    /**
     * Skips the test unless the backend declares FENCING.
     *
     * @param rule the rule, for the skip message
     */
    protected final void requireFencing(Rule rule) {
        LockClient probe = client();
        assumeTrue(probe.capabilities().contains(Capability.FENCING),
                rule + " needs Capability.FENCING, which " + fixture.name() + " does not declare");
    }

    /** A thread that runs a body and keeps the first failure for the test thread to rethrow. */
    protected static final class Worker extends Thread {
        private final AtomicReference<Throwable> failure = new AtomicReference<>();

        /**
         * Creates a worker.
         *
         * @param name a thread name suffix
         * @param body what to run
         */
        public Worker(String name, ThrowingRunnable body) {
            super(() -> { });
            setName("dlock-tck-" + name);
            setDaemon(true);
            this.body = body;
        }

        private final ThrowingRunnable body;

        @Override
        public void run() {
            try {
                body.run();
            } catch (Throwable t) {
                failure.set(t);
            }
        }

        /**
         * Waits for the worker and rethrows its failure.
         *
         * @param timeout how long to wait
         * @throws Exception what the body threw
         */
        public void finish(Duration timeout) throws Exception {
            join(timeout.toMillis());
            if (isAlive()) {
                interrupt();
                fail(getName() + " did not finish within " + timeout);
            }
            Throwable t = failure.get();
            if (t instanceof Error) {
                throw (Error) t;
            }
            if (t instanceof Exception) {
                throw (Exception) t;
            }
        }
    }

    /** A body that may throw anything. */
    @FunctionalInterface
    protected interface ThrowingRunnable {
        /**
         * Runs.
         *
         * @throws Exception anything
         */
        void run() throws Exception;
    }

    /**
     * Runs the same body on many threads, starting together, and rethrows the first failure.
     *
     * @param threads how many threads
     * @param label a thread name part
     * @param timeout how long each thread may take
     * @param body what each thread runs, given its index
     * @throws Exception the first failure of a thread
     */
    protected static void runConcurrently(int threads, String label, Duration timeout, IndexedBody body) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        List<Worker> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            int index = i;
            Worker w = new Worker(label + "-" + i, () -> {
                start.await();
                body.run(index);
            });
            workers.add(w);
            w.start();
        }
        start.countDown();
        for (Worker w : workers) {
            w.finish(timeout);
        }
    }

    /** One thread's share of a concurrent run. */
    @FunctionalInterface
    protected interface IndexedBody {
        /**
         * Runs one thread's share.
         *
         * @param index the thread's index
         * @throws Exception anything
         */
        void run(int index) throws Exception;
    }

}
