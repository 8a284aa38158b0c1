package io.dlock.internal;

import java.time.Duration;

/** Argument checks that name the parameter and the value. */
public final class Checks {

    private Checks() { }

    /**
     * Requires a non-null value.
     *
     * @param name the parameter name
     * @param value the value
     * @param <T> the type
     * @return the value
     * @throws IllegalArgumentException if null
     */
    public static <T> T notNull(String name, T value) {
        if (value == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
        return value;
    }

    /**
     * Requires a positive duration.
     *
     * @param name the parameter name
     * @param value the value
     * @return the value
     * @throws IllegalArgumentException if null, zero or negative
     */
    public static Duration positive(String name, Duration value) {
        notNull(name, value);
        if (value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(name + " must be positive, was " + value);
        }
        return value;
    }

    /**
     * Requires a duration that is zero or positive.
     *
     * @param name the parameter name
     * @param value the value
     * @return the value
     * @throws IllegalArgumentException if null or negative
     */
    public static Duration nonNegative(String name, Duration value) {
        notNull(name, value);
        if (value.isNegative()) {
            throw new IllegalArgumentException(name + " must not be negative, was " + value);
        }
        return value;
    }

    /**
     * Converts to nanoseconds, saturating instead of overflowing.
     *
     * @param d the duration
     * @return its length in nanoseconds, at most {@link Long#MAX_VALUE}
     */
    public static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }
}
