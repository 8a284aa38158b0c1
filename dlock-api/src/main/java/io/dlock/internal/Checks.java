package io.dlock.internal;

import io.dlock.spi.support.Arguments;
import java.time.Duration;

/** Argument checks that name the parameter and the value: the core's short names for {@link Arguments}. */
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
        return Arguments.notNull(name, value);
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
        return Arguments.positive(name, value);
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
        return Arguments.nonNegative(name, value);
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
