package io.dlock.internal;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * Exponential backoff with full jitter: the n-th pause is uniform in
 * {@code [0, min(cap, base * 2^n)]}. Not thread-safe: one per waiting acquisition.
 */
final class Backoff {

    private final long baseNanos;
    private final long capNanos;
    private final RandomGenerator random;
    private int attempt;

    /**
     * Creates a backoff.
     *
     * @param base the first ceiling
     * @param cap the largest ceiling
     * @param random the source of jitter
     */
    public Backoff(Duration base, Duration cap, RandomGenerator random) {
        this.baseNanos = Math.max(1, Checks.saturatedNanos(base));
        this.capNanos = Math.max(baseNanos, Checks.saturatedNanos(cap));
        this.random = random;
    }

    /** @return the ceiling of the next pause, without drawing it */
    public long ceilingNanos() {
        if (attempt >= 63) {
            return capNanos; // base * 2^63 exceeds any long, so the cap applies
        }
        int shift = attempt;
        long c = baseNanos << shift;
        return (c >>> shift) != baseNanos || c <= 0 ? capNanos : Math.min(c, capNanos);
    }

    /** @return the next pause in nanoseconds */
    public long nextNanos() {
        long ceiling = ceilingNanos();
        if (attempt < Integer.MAX_VALUE) {
            attempt++;
        }
        // uniform in [0, ceiling]; ceiling + 1 would overflow when the ceiling is Long.MAX_VALUE
        return ceiling == Long.MAX_VALUE ? random.nextLong() >>> 1 : random.nextLong(ceiling + 1);
    }

    /** Starts over from the base, after progress. */
    public void reset() {
        attempt = 0;
    }
}
