package io.dlock.bench;

import java.time.Duration;
import java.util.Objects;

/**
 * How long and how hard a benchmark run measures. Immutable and thread-safe; build with
 * {@link #builder()}. The defaults are those of the documented side-by-side run.
 */
public final class BenchConfig {

    private final Duration warmup;
    private final Duration measure;
    private final Duration leaseTime;
    private final int heldLocks;
    private final Duration heldWindow;
    private final int keys;
    private final int threads;
    private final long seed;

    private BenchConfig(Builder b) {
        this.warmup = b.warmup;
        this.measure = b.measure;
        this.leaseTime = b.leaseTime;
        this.heldLocks = b.heldLocks;
        this.heldWindow = b.heldWindow;
        this.keys = b.keys;
        this.threads = b.threads;
        this.seed = b.seed;
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * @return the warm-up before each measured workload (default 2 s: on a client pinned to one
     *     CPU, where the JIT compiles on the same CPU, dlock on etcd needed about 3 s of cycles to
     *     reach its steady speed; the uncontended workload warms up twice as long)
     */
    public Duration warmup() {
        return warmup;
    }

    /** @return how long each latency or throughput workload is measured (default 2 s) */
    public Duration measure() {
        return measure;
    }

    /** @return the lease (session, watchdog) time every contender holds locks with (default 4 s) */
    public Duration leaseTime() {
        return leaseTime;
    }

    /** @return how many locks one client holds at once for the renewal and heap figures (default 10,000) */
    public int heldLocks() {
        return heldLocks;
    }

    /** @return how long renewal requests are counted while those locks are held (default: the lease time) */
    public Duration heldWindow() {
        return heldWindow == null ? leaseTime : heldWindow;
    }

    /** @return how many lock names the throughput workload picks from (default 1,000) */
    public int keys() {
        return keys;
    }

    /** @return the threads of the contended throughput workload (default 16) */
    public int threads() {
        return threads;
    }

    /** @return the seed of every random choice (default 20261122) */
    public long seed() {
        return seed;
    }

    @Override
    public String toString() {
        return "BenchConfig{warmup=" + warmup + ", measure=" + measure + ", leaseTime=" + leaseTime + ", heldLocks="
                + heldLocks + ", heldWindow=" + heldWindow() + ", keys=" + keys + ", threads=" + threads + ", seed="
                + seed + "}";
    }

    /** Builds a {@link BenchConfig}. Not thread-safe. */
    public static final class Builder {

        private Duration warmup = Duration.ofSeconds(2);
        private Duration measure = Duration.ofSeconds(2);
        private Duration leaseTime = Duration.ofSeconds(4);
        private int heldLocks = 10_000;
        private Duration heldWindow;
        private int keys = 1_000;
        private int threads = 16;
        private long seed = 20261122L;

        private Builder() { }

        /**
         * @param warmup the warm-up before each workload, zero or more
         * @return this builder
         * @throws IllegalArgumentException if {@code warmup} is null or negative
         */
        public Builder warmup(Duration warmup) {
            this.warmup = nonNegative(warmup, "warmup");
            return this;
        }

        /**
         * @param measure how long each workload is measured, positive
         * @return this builder
         * @throws IllegalArgumentException if {@code measure} is null, zero or negative
         */
        public Builder measure(Duration measure) {
            this.measure = positive(measure, "measure");
            return this;
        }

        /**
         * @param leaseTime the lease time locks are held with, at least 2 s (etcd's minimum)
         * @return this builder
         * @throws IllegalArgumentException if {@code leaseTime} is null or under 2 s
         */
        public Builder leaseTime(Duration leaseTime) {
            if (leaseTime == null || leaseTime.compareTo(Duration.ofSeconds(2)) < 0) {
                throw new IllegalArgumentException("leaseTime must be at least 2 s, was " + leaseTime);
            }
            this.leaseTime = leaseTime;
            return this;
        }

        /**
         * @param heldLocks locks held at once for the renewal and heap figures; 0 skips them
         * @return this builder
         * @throws IllegalArgumentException if {@code heldLocks} is negative
         */
        public Builder heldLocks(int heldLocks) {
            if (heldLocks < 0) {
                throw new IllegalArgumentException("heldLocks must not be negative, was " + heldLocks);
            }
            this.heldLocks = heldLocks;
            return this;
        }

        /**
         * @param heldWindow how long renewal requests are counted, positive
         * @return this builder
         * @throws IllegalArgumentException if {@code heldWindow} is null, zero or negative
         */
        public Builder heldWindow(Duration heldWindow) {
            this.heldWindow = positive(heldWindow, "heldWindow");
            return this;
        }

        /**
         * @param keys lock names the throughput workload picks from, positive
         * @return this builder
         * @throws IllegalArgumentException if {@code keys} is not positive
         */
        public Builder keys(int keys) {
            if (keys < 1) {
                throw new IllegalArgumentException("keys must be positive, was " + keys);
            }
            this.keys = keys;
            return this;
        }

        /**
         * @param threads threads of the contended throughput workload, positive
         * @return this builder
         * @throws IllegalArgumentException if {@code threads} is not positive
         */
        public Builder threads(int threads) {
            if (threads < 1) {
                throw new IllegalArgumentException("threads must be positive, was " + threads);
            }
            this.threads = threads;
            return this;
        }

        /**
         * @param seed the seed of every random choice
         * @return this builder
         */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /** @return the configuration */
        public BenchConfig build() {
            return new BenchConfig(this);
        }

        private static Duration nonNegative(Duration d, String name) {
            if (d == null || d.isNegative()) {
                throw new IllegalArgumentException(name + " must be zero or positive, was " + d);
            }
            return d;
        }

        private static Duration positive(Duration d, String name) {
            Objects.requireNonNull(name);
            if (d == null || d.isZero() || d.isNegative()) {
                throw new IllegalArgumentException(name + " must be positive, was " + d);
            }
            return d;
        }
    }
}
