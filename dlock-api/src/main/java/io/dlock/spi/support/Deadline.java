package io.dlock.spi.support;

import java.time.Duration;

/**
 * The moment by which a backend call must have ended, on {@link System#nanoTime()}: the clock
 * real waits run on (the client's {@link io.dlock.Ticker} may be a test's fake, and must not bound
 * a wait). A backend makes one per call, usually with {@link BoundedCalls#deadline()}, and hands it
 * to every wait the call makes, so that the waits together keep to one operation timeout.
 *
 * <p>Saturating: a duration too long to count in nanoseconds (a timeout of a hundred years, or
 * {@code ChronoUnit.FOREVER}'s) makes a deadline about 73 years away rather than an
 * {@link ArithmeticException} or a deadline in the past. Immutable and thread-safe.
 */
public final class Deadline {

    private final long at;

    private Deadline(long at) {
        this.at = at;
    }

    /**
     * Returns the deadline {@code timeout} from now.
     *
     * @param timeout how long from now, zero or positive; saturated at about 73 years
     * @return the deadline
     * @throws IllegalArgumentException if {@code timeout} is null or negative
     */
    public static Deadline after(Duration timeout) {
        Arguments.nonNegative("timeout", timeout);
        return new Deadline(System.nanoTime() + LeaseTimes.saturatedNanos(timeout));
    }

    /**
     * Returns the deadline at a {@link System#nanoTime()} reading, for a backend that keeps its
     * deadlines as readings.
     *
     * @param nanoTime the reading
     * @return the deadline
     */
    public static Deadline at(long nanoTime) {
        return new Deadline(nanoTime);
    }

    /** @return the deadline as a {@link System#nanoTime()} reading */
    public long nanoTime() {
        return at;
    }

    /** @return the nanoseconds left, zero once the deadline has passed */
    public long remainingNanos() {
        return Math.max(0, at - System.nanoTime());
    }

    /** @return the time left, zero once the deadline has passed */
    public Duration remaining() {
        return Duration.ofNanos(remainingNanos());
    }

    /** @return whether the deadline has passed */
    public boolean expired() {
        return at - System.nanoTime() <= 0;
    }

    /**
     * Returns the earlier of this deadline and one {@code timeout} from now: a part of a call that
     * must end sooner than the call (a clean-up's budget, say).
     *
     * @param timeout how long from now at most, zero or positive
     * @return the earlier deadline
     * @throws IllegalArgumentException if {@code timeout} is null or negative
     */
    public Deadline atMost(Duration timeout) {
        Arguments.nonNegative("timeout", timeout);
        Deadline other = after(timeout);
        return other.at - at < 0 ? other : this;
    }

    /** @return the time left, for logs */
    @Override
    public String toString() {
        return "Deadline{in " + remaining().toMillis() + " ms}";
    }
}
