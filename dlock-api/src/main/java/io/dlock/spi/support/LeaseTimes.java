package io.dlock.spi.support;

import java.time.Duration;

/**
 * Lease times in the units servers take. A server's lease must never be shorter than the one the
 * client counts with, so every conversion rounds up, and none returns zero (which servers read as
 * "no expiry") or overflows.
 */
public final class LeaseTimes {

    private LeaseTimes() { }

    /**
     * Returns a lease time in whole milliseconds, rounded up.
     *
     * @param lease a positive lease time
     * @return at least 1; {@link Long#MAX_VALUE} for a lease too long to count in milliseconds
     * @throws IllegalArgumentException if {@code lease} is null, zero or negative
     */
    public static long ceilMillis(Duration lease) {
        check(lease, "lease");
        try {
            long ms = lease.toMillis();
            return lease.equals(Duration.ofMillis(ms)) ? ms : Math.addExact(ms, 1);
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /**
     * Returns a lease time in whole seconds, rounded up.
     *
     * @param lease a positive lease time
     * @return at least 1
     * @throws IllegalArgumentException if {@code lease} is null, zero or negative
     */
    public static long ceilSeconds(Duration lease) {
        check(lease, "lease");
        long s = lease.getSeconds();
        return lease.getNano() == 0 ? s : s + 1; // getSeconds() < Long.MAX_VALUE whenever nanos > 0
    }

    /**
     * Returns a duration in nanoseconds, saturated rather than overflowing: a deadline computed as
     * {@code now + saturatedNanos(d)} stays comparable with {@code System.nanoTime()} arithmetic.
     *
     * @param d a duration, zero or positive
     * @return the nanoseconds, at most {@code Long.MAX_VALUE / 4}
     * @throws IllegalArgumentException if {@code d} is null or negative
     */
    public static long saturatedNanos(Duration d) {
        if (d == null || d.isNegative()) {
            throw new IllegalArgumentException("d must be zero or positive, was " + d);
        }
        long cap = Long.MAX_VALUE / 4;
        return d.compareTo(Duration.ofNanos(cap)) >= 0 ? cap : d.toNanos();
    }

    /**
     * Returns how long a backend spends trying to undo an acquisition at once before it leaves the
     * rest to a background retry or to the lease's expiry: a quarter of the operation timeout, but
     * not less than one round trip of the backend unless the timeout itself is shorter. A caller
     * that gives up on a lock should not wait long for the courtesy of its clean-up.
     *
     * @param operationTimeout the client's operation timeout
     * @param roundTrip the least time one clean-up request needs, e.g. 50 ms for a request over a
     *     plain connection, more for one through an HTTPS client with its own retries
     * @return the budget
     * @throws IllegalArgumentException if an argument is null, zero or negative
     */
    public static Duration abandonBudget(Duration operationTimeout, Duration roundTrip) {
        check(operationTimeout, "operationTimeout");
        check(roundTrip, "roundTrip");
        Duration quarter = operationTimeout.dividedBy(4);
        Duration min = operationTimeout.compareTo(roundTrip) < 0 ? operationTimeout : roundTrip;
        return quarter.compareTo(min) > 0 ? quarter : min;
    }

    private static void check(Duration d, String name) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, was " + d);
        }
    }
}
