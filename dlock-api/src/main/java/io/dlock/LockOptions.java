package io.dlock;

import io.dlock.internal.Checks;
import java.time.Duration;
import java.util.Objects;

/**
 * How a lock is held: its lease time and whether and how often the lease is renewed.
 * Immutable and thread-safe; built with {@link #builder()} and validated on build.
 *
 * <p>The lease time bounds how long a lock stays held after its holder crashes or is cut off.
 * While {@link #autoRenew()} is on, dlock renews every {@link #renewInterval()} (by default a
 * third of the lease time), so a live holder keeps the lock for as long as it wants.
 */
public final class LockOptions {

    /** The lease time used when none is given: 30 seconds. */
    public static final Duration DEFAULT_LEASE_TIME = Duration.ofSeconds(30);

    private static final LockOptions DEFAULTS = builder().build();

    private final Duration leaseTime;
    private final boolean autoRenew;
    private final Duration renewInterval;
    /** Whether the renew interval was set, rather than derived from the lease time. */
    private final boolean renewIntervalSet;

    private LockOptions(Builder b) {
        this.leaseTime = b.leaseTime;
        this.autoRenew = b.autoRenew;
        this.renewIntervalSet = b.renewInterval != null;
        this.renewInterval = renewIntervalSet ? b.renewInterval : b.leaseTime.dividedBy(3);
    }

    /**
     * Returns the defaults: a 30 second lease, renewed automatically every 10 seconds.
     *
     * @return the default options
     */
    public static LockOptions defaults() {
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
     * Starts building options from these. A renew interval that was not set explicitly stays
     * derived: it follows a new lease time.
     *
     * @return a new builder holding this instance's values
     */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.leaseTime = leaseTime;
        b.autoRenew = autoRenew;
        b.renewInterval = renewIntervalSet ? renewInterval : null;
        return b;
    }

    /** @return how long a grant or a renewal keeps the lock on the server */
    public Duration leaseTime() {
        return leaseTime;
    }

    /** @return whether dlock renews the lease in the background while it is held */
    public boolean autoRenew() {
        return autoRenew;
    }

    /** @return how often a held lease is renewed when {@link #autoRenew()} is on */
    public Duration renewInterval() {
        return renewInterval;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof LockOptions)) {
            return false;
        }
        LockOptions other = (LockOptions) o;
        return autoRenew == other.autoRenew && leaseTime.equals(other.leaseTime)
                && renewInterval.equals(other.renewInterval);
    }

    @Override
    public int hashCode() {
        return Objects.hash(leaseTime, autoRenew, renewInterval);
    }

    @Override
    public String toString() {
        return "LockOptions{leaseTime=" + leaseTime + ", autoRenew=" + autoRenew
                + ", renewInterval=" + renewInterval + "}";
    }

    /** Builds {@link LockOptions}. Not thread-safe. */
    public static final class Builder {
        private Duration leaseTime = DEFAULT_LEASE_TIME;
        private boolean autoRenew = true;
        private Duration renewInterval;

        private Builder() { }

        /**
         * Sets the lease time.
         *
         * @param leaseTime positive; a backend may require more (etcd, for one, about 2 s)
         * @return this builder
         * @throws IllegalArgumentException if {@code leaseTime} is null, zero or negative
         */
        public Builder leaseTime(Duration leaseTime) {
            this.leaseTime = Checks.positive("leaseTime", leaseTime);
            return this;
        }

        /**
         * Turns automatic renewal on or off (on by default).
         *
         * @param autoRenew whether to renew in the background
         * @return this builder
         */
        public Builder autoRenew(boolean autoRenew) {
            this.autoRenew = autoRenew;
            return this;
        }

        /**
         * Sets how often to renew; by default a third of the lease time.
         *
         * @param renewInterval positive and less than half the lease time
         * @return this builder
         * @throws IllegalArgumentException if {@code renewInterval} is null, zero or negative
         */
        public Builder renewInterval(Duration renewInterval) {
            this.renewInterval = Checks.positive("renewInterval", renewInterval);
            return this;
        }

        /**
         * Validates and builds.
         *
         * @return the options
         * @throws IllegalArgumentException if the renew interval is not less than half the lease
         *     time (a renewal could then never succeed before the lease ends)
         */
        public LockOptions build() {
            if (renewInterval != null && renewInterval.multipliedBy(2).compareTo(leaseTime) >= 0) {
                throw new IllegalArgumentException("renewInterval must be less than half of leaseTime ("
                        + leaseTime + "), was " + renewInterval);
            }
            return new LockOptions(this);
        }
    }
}
