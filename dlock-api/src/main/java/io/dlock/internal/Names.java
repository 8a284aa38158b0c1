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
        if (name == null) {
            throw new IllegalArgumentException("name must not be null");
        }
        if (name.isEmpty()) {
            throw new IllegalArgumentException("name must not be empty");
        }
        if (name.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("name must be at most " + MAX_LENGTH
                    + " characters, was " + name.length() + " ('" + name.substring(0, 32) + "...')");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (Character.isISOControl(c)) {
                throw new IllegalArgumentException("name must not contain control characters, found U+"
                        + String.format("%04X", (int) c) + " at index " + i);
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 >= name.length() || !Character.isLowSurrogate(name.charAt(i + 1))) {
                    throw new IllegalArgumentException("name must be well-formed UTF-16, found a lone surrogate at index " + i);
                }
                i++;
            } else if (Character.isLowSurrogate(c)) {
                throw new IllegalArgumentException("name must be well-formed UTF-16, found a lone surrogate at index " + i);
            }
        }
        return name;
    }
}
