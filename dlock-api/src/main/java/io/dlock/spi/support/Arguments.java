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

    /**
     * Requires a valid lock name, by the rule every backend relies on to encode names injectively:
     * non-empty, at most {@link io.dlock.LockClient#MAX_NAME_LENGTH} UTF-16 characters, no control
     * characters, well-formed UTF-16 (no lone surrogates). For a provider's own public methods
     * that take a lock name outside a {@link io.dlock.LockClient}.
     *
     * @param name the parameter's name, for the message
     * @param value the argument; {@code null} is rejected
     * @return {@code value}
     * @throws IllegalArgumentException if {@code value} is {@code null} or not a valid lock name
     */
    public static String lockName(String name, String value) {
        notNull(name, value);
        int max = io.dlock.LockClient.MAX_NAME_LENGTH;
        if (value.isEmpty()) {
            throw new IllegalArgumentException(name + " must not be empty");
        }
        if (value.length() > max) {
            throw new IllegalArgumentException(name + " must be at most " + max + " characters, was " + value.length()
                    + " ('" + value.substring(0, 32) + "...')");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (Character.isISOControl(c)) {
                throw new IllegalArgumentException(name + " must not contain control characters, found U+"
                        + String.format("%04X", (int) c) + " at index " + i);
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 >= value.length() || !Character.isLowSurrogate(value.charAt(i + 1))) {
                    throw new IllegalArgumentException(name + " must be well-formed UTF-16, found a lone surrogate at index " + i);
                }
                i++;
            } else if (Character.isLowSurrogate(c)) {
                throw new IllegalArgumentException(name + " must be well-formed UTF-16, found a lone surrogate at index " + i);
            }
        }
        return value;
    }
}
