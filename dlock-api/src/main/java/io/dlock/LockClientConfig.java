package io.dlock;

import io.dlock.internal.Checks;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Everything needed to open a {@link LockClient}: the backend URI, the operation timeout, the
 * default {@link LockOptions}, and the hooks tests and metrics plug into. Immutable and
 * thread-safe; built with {@link #builder(String)} and validated on build.
 *
 * <p>The URI selects the backend by its scheme ({@code redis://}, {@code etcd://}, ...); see
 * {@link LockClient#open(String)}. Its password, if any, never appears in {@link #toString()},
 * exception messages or logs.
 *
 * <p><b>Threads.</b> A client's threads are bounded, whatever the number of locks, leases and
 * waiters, and no waiting acquisition holds a thread (a blocking caller waits on its own thread,
 * an {@link DistributedLock#acquireAsync asynchronous} one on none). By default a client has one
 * timer thread ({@code dlock-N-timer-1}), a worker pool of at most 16 threads
 * ({@code dlock-N-worker-k}: renewal passes, at most 2 at once; releases of lost leases, at most
 * 4; asynchronous acquisitions' tries, at most 10; {@code close()}'s releases, 16), at most 2
 * threads that run {@link Lease#onLost} listeners ({@code dlock-N-events-k}), and what its backend
 * starts (a connection reader, for instance). Idle pool threads end after 30 seconds.
 * {@link Builder#executor(Executor)} and {@link Builder#scheduler(ScheduledExecutorService)}
 * replace the pools and the timer with the application's own.
 */
public final class LockClientConfig {

    /** The operation timeout used when none is given: 5 seconds. */
    public static final Duration DEFAULT_OPERATION_TIMEOUT = Duration.ofSeconds(5);

    private final String uri;
    private final Duration operationTimeout;
    private final LockOptions defaultLockOptions;
    private final LockListener listener;
    private final Ticker ticker;
    private final Clock clock;
    private final Duration retryBase;
    private final Duration retryCap;
    private final Executor executor;
    private final ScheduledExecutorService scheduler;

    private LockClientConfig(Builder b) {
        this.uri = b.uri;
        this.operationTimeout = b.operationTimeout;
        this.defaultLockOptions = b.defaultLockOptions;
        this.listener = b.listener;
        this.ticker = b.ticker;
        this.clock = b.clock;
        this.retryBase = b.retryBase;
        this.retryCap = b.retryCap;
        this.executor = b.executor;
        this.scheduler = b.scheduler;
    }

    /**
     * Starts a configuration for a backend URI.
     *
     * @param uri the backend, e.g. {@code redis://127.0.0.1:6379}
     * @return a new builder
     * @throws IllegalArgumentException if {@code uri} is null or blank
     */
    public static Builder builder(String uri) {
        return new Builder(uri);
    }

    /**
     * Starts building from this configuration.
     *
     * @return a new builder holding this instance's values
     */
    public Builder toBuilder() {
        Builder b = new Builder(uri);
        b.operationTimeout = operationTimeout;
        b.defaultLockOptions = defaultLockOptions;
        b.listener = listener;
        b.ticker = ticker;
        b.clock = clock;
        b.retryBase = retryBase;
        b.retryCap = retryCap;
        b.executor = executor;
        b.scheduler = scheduler;
        return b;
    }

    /** @return the backend URI, as given (it may hold credentials: do not log it) */
    public String uri() {
        return uri;
    }

    /** @return the longest any single backend operation may take before it fails */
    public Duration operationTimeout() {
        return operationTimeout;
    }

    /** @return the options of locks obtained with {@link LockClient#lock(String)} */
    public LockOptions defaultLockOptions() {
        return defaultLockOptions;
    }

    /** @return the metrics hook */
    public LockListener listener() {
        return listener;
    }

    /** @return the monotonic clock used for validity and timeouts */
    public Ticker ticker() {
        return ticker;
    }

    /**
     * Returns the wall clock. dlock's guarantees never depend on it: it is only used where a
     * backend shows a time to people. Tests skew it to prove that (TCK rule S10).
     *
     * @return the wall clock
     */
    public Clock clock() {
        return clock;
    }

    /** @return the first, shortest pause between two attempts of a waiting acquire */
    public Duration retryBase() {
        return retryBase;
    }

    /** @return the longest pause between two attempts of a waiting acquire (the poll fallback) */
    public Duration retryCap() {
        return retryCap;
    }

    /**
     * Returns the application's executor, if one was given with
     * {@link Builder#executor(Executor)}; else the client runs its own bounded pools.
     *
     * @return the executor the client runs its background work on, if the application supplied it
     */
    public Optional<Executor> executor() {
        return Optional.ofNullable(executor);
    }

    /**
     * Returns the application's scheduler, if one was given with
     * {@link Builder#scheduler(ScheduledExecutorService)}; else the client runs its own timer thread.
     *
     * @return the scheduler the client runs its timers on, if the application supplied it
     */
    public Optional<ScheduledExecutorService> scheduler() {
        return Optional.ofNullable(scheduler);
    }

    @Override
    public String toString() {
        return "LockClientConfig{uri=" + io.dlock.spi.BackendUri.redact(uri)
                + ", operationTimeout=" + operationTimeout + ", defaultLockOptions=" + defaultLockOptions + "}";
    }

    /** Builds {@link LockClientConfig}. Not thread-safe. */
    public static final class Builder {
        private String uri;
        private Duration operationTimeout = DEFAULT_OPERATION_TIMEOUT;
        private LockOptions defaultLockOptions = LockOptions.defaults();
        private LockListener listener = LockListener.NONE;
        private Ticker ticker = Ticker.system();
        private Clock clock = Clock.systemUTC();
        private Duration retryBase = Duration.ofMillis(20);
        private Duration retryCap = Duration.ofSeconds(1);
        private Executor executor;
        private ScheduledExecutorService scheduler;

        private Builder(String uri) {
            uri(uri);
        }

        /**
         * Sets the backend URI.
         *
         * @param uri the backend URI
         * @return this builder
         * @throws IllegalArgumentException if {@code uri} is null or blank
         */
        public Builder uri(String uri) {
            if (uri == null || uri.isBlank()) {
                throw new IllegalArgumentException("uri must not be null or blank, was " + (uri == null ? "null" : "'" + uri + "'"));
            }
            this.uri = uri.trim();
            return this;
        }

        /**
         * Sets the operation timeout (default 5 s): the longest one backend call may take.
         *
         * @param operationTimeout positive
         * @return this builder
         * @throws IllegalArgumentException if {@code operationTimeout} is null, zero or negative
         */
        public Builder operationTimeout(Duration operationTimeout) {
            this.operationTimeout = Checks.positive("operationTimeout", operationTimeout);
            return this;
        }

        /**
         * Sets the options of locks obtained without explicit options.
         *
         * @param defaultLockOptions the options
         * @return this builder
         * @throws IllegalArgumentException if {@code defaultLockOptions} is null
         */
        public Builder defaultLockOptions(LockOptions defaultLockOptions) {
            this.defaultLockOptions = Checks.notNull("defaultLockOptions", defaultLockOptions);
            return this;
        }

        /**
         * Sets the metrics hook.
         *
         * @param listener the listener
         * @return this builder
         * @throws IllegalArgumentException if {@code listener} is null
         */
        public Builder listener(LockListener listener) {
            this.listener = Checks.notNull("listener", listener);
            return this;
        }

        /**
         * Sets the monotonic clock (for tests).
         *
         * @param ticker the ticker
         * @return this builder
         * @throws IllegalArgumentException if {@code ticker} is null
         */
        public Builder ticker(Ticker ticker) {
            this.ticker = Checks.notNull("ticker", ticker);
            return this;
        }

        /**
         * Sets the wall clock (for tests; see {@link LockClientConfig#clock()}).
         *
         * @param clock the clock
         * @return this builder
         * @throws IllegalArgumentException if {@code clock} is null
         */
        public Builder clock(Clock clock) {
            this.clock = Checks.notNull("clock", clock);
            return this;
        }

        /**
         * Sets the pauses between attempts of a waiting acquire: exponential from {@code base} up
         * to {@code cap}, with full jitter. Backends that notify waiters wake earlier.
         *
         * @param base the first pause, positive
         * @param cap the longest pause, at least {@code base}
         * @return this builder
         * @throws IllegalArgumentException if either is null or not positive, or cap &lt; base
         */
        public Builder retry(Duration base, Duration cap) {
            Checks.positive("base", base);
            Checks.positive("cap", cap);
            if (cap.compareTo(base) < 0) {
                throw new IllegalArgumentException("cap must be at least base (" + base + "), was " + cap);
            }
            this.retryBase = base;
            this.retryCap = cap;
            return this;
        }

        /**
         * Runs the client's background work on the application's executor instead of the
         * client's own pools (by default a worker pool of at most 16 threads and 2 threads for
         * listeners; see {@link LockClientConfig}).
         *
         * <p><b>What runs there:</b> renewal passes; the tries of {@link DistributedLock#acquireAsync
         * asynchronous} acquisitions, and their clean-up, so their futures are completed there
         * (dependent stages that name no executor of their own run there, or on a thread that
         * waits for the future); best-effort releases of lost leases; the releases
         * {@link LockClient#close()} sends; and {@link Lease#onLost} listeners. Blocking
         * acquisitions never use it: they run on their caller's thread.
         *
         * <p><b>Concurrency:</b> the client submits at most 2 renewal passes, 4 releases, 10 tries
         * and 2 listener tasks at once (16 releases while it closes), each of which may block up to
         * the operation timeout; the rest wait in the client, not in the executor, so it never
         * holds more tasks than that, whatever the number of locks and waiters. The executor must
         * run tasks on threads other than the submitting one and run at least 18 at once (a
         * virtual-thread-per-task executor, or a pool of 18 or more): with fewer, renewals wait
         * behind tries and a lease can expire before its renewal runs. It must accept tasks while
         * the client is open.
         *
         * <p>The client never shuts the executor down, also not in {@code close()}; the
         * application does, after closing the client.
         *
         * @param executor the executor
         * @return this builder
         * @throws IllegalArgumentException if {@code executor} is null or an
         *     {@link ExecutorService} that is shut down
         */
        public Builder executor(Executor executor) {
            Checks.notNull("executor", executor);
            if (executor instanceof ExecutorService && ((ExecutorService) executor).isShutdown()) {
                throw new IllegalArgumentException("executor must not be shut down, was " + executor);
            }
            this.executor = executor;
            return this;
        }

        /**
         * Runs the client's timers on the application's scheduler instead of the client's own
         * timer thread.
         *
         * <p><b>What runs there:</b> short tasks only, none of which blocks: lease expiry checks,
         * the start of renewal passes (the passes themselves run on the
         * {@link #executor(Executor) executor}), and the ends of waits, local and between tries,
         * which hand the next try to the executor (or to the blocking caller). Their number grows
         * with the leases and waiters, their threads do not.
         *
         * <p><b>Concurrency:</b> one thread is enough; a late timer delays an expiry report or a
         * renewal, so the scheduler should not be shared with tasks that block.
         *
         * <p>The client never shuts the scheduler down: {@code close()} cancels the client's own
         * pending tasks on it, and any that still run do nothing.
         *
         * @param scheduler the scheduler
         * @return this builder
         * @throws IllegalArgumentException if {@code scheduler} is null or shut down
         */
        public Builder scheduler(ScheduledExecutorService scheduler) {
            Checks.notNull("scheduler", scheduler);
            if (scheduler.isShutdown()) {
                throw new IllegalArgumentException("scheduler must not be shut down, was " + scheduler);
            }
            this.scheduler = scheduler;
            return this;
        }

        /**
         * Builds the configuration.
         *
         * @return the configuration
         */
        public LockClientConfig build() {
            return new LockClientConfig(this);
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof LockClientConfig)) {
            return false;
        }
        LockClientConfig c = (LockClientConfig) o;
        return uri.equals(c.uri) && operationTimeout.equals(c.operationTimeout)
                && defaultLockOptions.equals(c.defaultLockOptions) && listener.equals(c.listener)
                && ticker.equals(c.ticker) && clock.equals(c.clock)
                && retryBase.equals(c.retryBase) && retryCap.equals(c.retryCap)
                && Objects.equals(executor, c.executor) && Objects.equals(scheduler, c.scheduler);
    }

    @Override
    public int hashCode() {
        return Objects.hash(uri, operationTimeout, defaultLockOptions);
    }
}
