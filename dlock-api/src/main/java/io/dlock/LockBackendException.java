package io.dlock;

/**
 * The backend failed or did not answer within the operation timeout. The outcome of the
 * operation on the server is unknown; dlock never reports a grant it is not sure of, and a lock
 * that an acquire may have taken on the server is released on a best-effort basis or expires
 * after its lease time.
 *
 * <p>Two kinds, told apart by {@link #retryable()}: a <em>transient</em> failure (the server is
 * unreachable, slow, failing over, or the connection broke), which a later attempt may not meet;
 * and a <em>configuration</em> failure ({@link LockConfigurationException}: credentials rejected,
 * permission denied, a table or other resource missing, a TLS mismatch, a server dlock cannot
 * use), which every attempt meets until someone changes the configuration.
 */
public class LockBackendException extends LockException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     *
     * @param message what failed; never contains credentials ({@code null} is accepted, as by
     *     {@link RuntimeException}, so that building the exception never fails)
     * @param lockName the lock concerned, or {@code null} if none
     * @param cause the client library's exception, or {@code null}
     */
    public LockBackendException(String message, String lockName, Throwable cause) {
        super(message, lockName, cause);
    }

    /**
     * Says whether trying the operation again may succeed without anyone changing the
     * configuration. A caller that retries should retry only these, with a backoff.
     *
     * @return {@code true} for a transient failure; {@code false} for a
     *     {@link LockConfigurationException}
     */
    public boolean retryable() {
        return true;
    }
}
