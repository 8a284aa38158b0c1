package io.dlock.internal;

/** Lock name validation, the same for every backend. */
public final class Names {

    /** The longest lock name, in UTF-16 characters. */
    public static final int MAX_LENGTH = io.dlock.LockClient.MAX_NAME_LENGTH;

    private Names() { }

    /**
     * Validates a lock name: non-empty, at most {@link #MAX_LENGTH} characters, no control
     * characters, and well-formed UTF-16 (no lone surrogates), so that every backend can encode
     * it injectively.
     *
     * @param name the name
     * @return the name
     * @throws IllegalArgumentException naming the parameter and the problem
     */
    public static String validate(String name) {
        return io.dlock.spi.support.Arguments.lockName("name", name);
    }
}
