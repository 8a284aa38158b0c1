package io.dlock;

/**
 * The backend failed or did not answer within the operation timeout. The outcome of the
 * operation on the server is unknown; dlock never reports a grant it is not sure of, and a lock
 * that an acquire may have taken on the server is released on a best-effort basis or expires
 * after its lease time.
 */
public class LockBackendException extends LockException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     *
     * @param message what failed; never contains credentials
     * @param lockName the lock concerned, or {@code null} if none
     * @param cause the client library's exception, or {@code null}
     */
    public LockBackendException(String message, String lockName, Throwable cause) {
        super(message, lockName, cause);
    }
}
