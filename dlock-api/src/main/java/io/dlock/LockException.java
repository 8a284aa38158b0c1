package io.dlock;

import java.util.Optional;

/**
 * The root of every exception dlock throws, apart from {@link IllegalArgumentException} for bad
 * input, {@link IllegalStateException} for use of a closed client and {@link InterruptedException}
 * on blocking waits. Unchecked; carries the lock name where one applies.
 */
public class LockException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** @serial the lock concerned, or {@code null} */
    private final String lockName;

    /**
     * Creates an exception.
     *
     * @param message what happened; never contains credentials ({@code null} is accepted, as by
     *     {@link RuntimeException}, so that building the exception never fails)
     * @param lockName the lock concerned, or {@code null} if none
     * @param cause the underlying failure, or {@code null}
     */
    public LockException(String message, String lockName, Throwable cause) {
        super(message, cause);
        this.lockName = lockName;
    }

    /**
     * Returns the name of the lock this exception concerns.
     *
     * @return the lock name, or empty when the failure is not about one lock
     */
    public Optional<String> lockName() {
        return Optional.ofNullable(lockName);
    }
}
