package io.dlock.spi.support;

import java.time.Duration;

/**
 * The null rule and the common argument checks, as dlock applies them on every public method:
 * a bad argument is an {@link IllegalArgumentException} whose message starts with the parameter's
 * name ({@code "leaseTime must be positive, was PT0S"}), never a {@link NullPointerException}.
 * A parameter that accepts {@code null} says so in its {@code @param} javadoc. Providers use these
 * so that their public methods follow the same rule. Stateless and thread-safe.
 */
public final class Arguments {

    private Arguments() { }

    /**
     * Requires a non-null value.
     *
     * @param name the parameter's name, for the message
     * @param value the argument; {@code null} is what is rejected
     * @param <T> its type
     * @return {@code value}
     * @throws IllegalArgumentException if {@code value} (or {@code name}) is {@code null}
     */
    public static <T> T notNull(String name, T value) {
        if (name == null) {
            throw new IllegalArgumentException("name must not be null");
        }
        if (value == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
        return value;
    }

    /**
     * Requires a positive duration.
     *
     * @param name the parameter's name, for the message
     * @param value the argument; {@code null} is rejected
     * @return {@code value}
     * @throws IllegalArgumentException if {@code value} is {@code null}, zero or negative
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
     * @param name the parameter's name, for the message
     * @param value the argument; {@code null} is rejected
     * @return {@code value}
     * @throws IllegalArgumentException if {@code value} is {@code null} or negative
     */
    public static Duration nonNegative(String name, Duration value) {
        notNull(name, value);
        if (value.isNegative()) {
            throw new IllegalArgumentException(name + " must not be negative, was " + value);
        }
        return value;
    }
}
