package io.dlock;

import io.dlock.internal.Checks;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How a {@link LeaderElection} contends: the lease behind the leadership, how long a candidate
 * that resigned stays out, and how long it waits after a backend failure. Immutable and
 * thread-safe; built with {@link #builder()} and validated on build.
 */
public final class ElectionOptions {

    /** How long a candidate that resigned waits before contending again, when not set: 2 seconds. */
    public static final Duration DEFAULT_RESIGN_PAUSE = Duration.ofSeconds(2);

    /** How long a candidate waits after a backend failure before it contends again, when not set: 1 second. */
    public static final Duration DEFAULT_RETRY_DELAY = Duration.ofSeconds(1);

    private static final ElectionOptions DEFAULTS = builder().build();

    private final LockOptions lockOptions;
    private final Duration resignPause;
    private final Duration retryDelay;

    private ElectionOptions(Builder b) {
        this.lockOptions = b.lockOptions;
        this.resignPause = b.resignPause;
        this.retryDelay = b.retryDelay;
    }

    /**
     * Returns the defaults: the client's default lock options, a 2 s resign pause, a 1 s retry delay.
     *
     * @return the default options
     */
    public static ElectionOptions defaults() {
        return DEFAULTS;
    }

    /**
     * Starts building options from the defaults.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Returns the options of the lock behind the leadership. The lease time bounds how long a
     * crashed leader keeps the leadership; keep automatic renewal on, or the leadership ends
     * after one lease time.
     *
     * @return the options, or empty to use the client's {@link LockClientConfig#defaultLockOptions()}
     */
    public Optional<LockOptions> lockOptions() {
        return Optional.ofNullable(lockOptions);
    }

    /** @return how long a candidate stays out of the contest after {@link LeaderElection#resign()} */
    public Duration resignPause() {
        return resignPause;
    }

    /** @return how long a candidate waits after a backend failure before it contends again */
    public Duration retryDelay() {
        return retryDelay;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ElectionOptions)) {
            return false;
        }
        ElectionOptions other = (ElectionOptions) o;
        return Objects.equals(lockOptions, other.lockOptions) && resignPause.equals(other.resignPause)
                && retryDelay.equals(other.retryDelay);
    }

    @Override
    public int hashCode() {
        return Objects.hash(lockOptions, resignPause, retryDelay);
    }

    @Override
    public String toString() {
        return "ElectionOptions{lockOptions=" + (lockOptions == null ? "client default" : lockOptions)
                + ", resignPause=" + resignPause + ", retryDelay=" + retryDelay + "}";
    }

    /** Builds {@link ElectionOptions}. Not thread-safe. */
    public static final class Builder {
        private LockOptions lockOptions;
        private Duration resignPause = DEFAULT_RESIGN_PAUSE;
        private Duration retryDelay = DEFAULT_RETRY_DELAY;

        private Builder() { }

        /**
         * Sets the options of the lock behind the leadership (by default the client's).
         *
         * @param lockOptions the lock options
         * @return this builder
         * @throws IllegalArgumentException if {@code lockOptions} is null
         */
        public Builder lockOptions(LockOptions lockOptions) {
            this.lockOptions = Checks.notNull("lockOptions", lockOptions);
            return this;
        }

        /**
         * Sets how long a candidate that resigned stays out of the contest, so that another
         * candidate can take over (default 2 s). A candidate waiting on a backend that notifies
         * waiters takes over in milliseconds; one that polls needs up to the client's retry cap.
         *
         * @param resignPause zero or positive
         * @return this builder
         * @throws IllegalArgumentException if {@code resignPause} is null or negative
         */
        public Builder resignPause(Duration resignPause) {
            this.resignPause = Checks.nonNegative("resignPause", resignPause);
            return this;
        }

        /**
         * Sets how long a candidate waits after a backend failure before it contends again
         * (default 1 s). A {@link io.dlock.LockConfigurationException} is retried at the same pace,
         * since the configuration may be fixed meanwhile; the log says which kind of failure it is.
         *
         * @param retryDelay positive
         * @return this builder
         * @throws IllegalArgumentException if {@code retryDelay} is null, zero or negative
         */
        public Builder retryDelay(Duration retryDelay) {
            this.retryDelay = Checks.positive("retryDelay", retryDelay);
            return this;
        }

        /**
         * Builds the options.
         *
         * @return the options
         */
        public ElectionOptions build() {
            return new ElectionOptions(this);
        }
    }
}
