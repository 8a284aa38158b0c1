package io.dlock;

import io.dlock.internal.Checks;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

/**
 * Everything needed to open a {@link LockClient}: the backend URI, the operation timeout, the
 * default {@link LockOptions}, and the hooks tests and metrics plug into. Immutable and
 * thread-safe; built with {@link #builder(String)} and validated on build.
 *
 * <p>The URI selects the backend by its scheme ({@code redis://}, {@code etcd://}, ...); see
 * {@link LockClient#open(String)}. Its password, if any, never appears in {@link #toString()},
 * exception messages or logs.
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

    private LockClientConfig(Builder b) {
        this.uri = b.uri;
        this.operationTimeout = b.operationTimeout;
        this.defaultLockOptions = b.defaultLockOptions;
        this.listener = b.listener;
        this.ticker = b.ticker;
        this.clock = b.clock;
        this.retryBase = b.retryBase;
        this.retryCap = b.retryCap;
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
                && retryBase.equals(c.retryBase) && retryCap.equals(c.retryCap);
    }

    @Override
    public int hashCode() {
        return Objects.hash(uri, operationTimeout, defaultLockOptions);
    }
}
