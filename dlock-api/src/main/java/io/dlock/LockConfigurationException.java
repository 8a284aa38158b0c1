package io.dlock;

/**
 * The backend refused the operation because of how the client or the server is configured:
 * retrying will fail the same way until someone changes the configuration. {@link #kind()} says
 * what to look at; the message names it further and never contains credentials.
 *
 * <p>Thrown wherever a {@link LockBackendException} may be: by {@link LockClient#open}, by an
 * acquire, a release or a renewal (a renewal's is reported through the lease's loss, like any
 * other renewal failure).
 */
public final class LockConfigurationException extends LockBackendException {

    private static final long serialVersionUID = 1L;

    /** What is wrong with the configuration. */
    public enum Kind {
        /** The server rejected the credentials (wrong password, unknown user, no credentials where some are required). */
        CREDENTIALS,
        /** The credentials are accepted but lack a permission the operation needs (an ACL, a role, an IAM policy). */
        PERMISSION,
        /** Something the backend needs on the server does not exist and may not be created (a table, a path). */
        MISSING_RESOURCE,
        /** TLS is configured on one side only, or the server's certificate is not trusted. */
        TLS,
        /**
         * The server is not one dlock can use: another service on the port, a version without a
         * feature the backend needs, a replica that refuses writes, or data under dlock's names
         * that dlock did not write.
         */
        INCOMPATIBLE_SERVER
    }

    /** @serial what is wrong */
    private final Kind kind;

    /**
     * Creates an exception.
     *
     * @param kind what is wrong with the configuration
     * @param message what failed and what to check; never contains credentials ({@code null} is accepted, as by
     *     {@link RuntimeException}, so that building the exception never fails)
     * @param lockName the lock concerned, or {@code null} if none
     * @param cause the client library's exception, or {@code null}
     * @throws IllegalArgumentException if {@code kind} is null
     */
    public LockConfigurationException(Kind kind, String message, String lockName, Throwable cause) {
        super(message, lockName, cause);
        if (kind == null) {
            throw new IllegalArgumentException("kind must not be null");
        }
        this.kind = kind;
    }

    /**
     * Returns what is wrong with the configuration.
     *
     * @return the kind, never null
     */
    public Kind kind() {
        return kind;
    }

    /**
     * Always {@code false}: the same attempt fails the same way until the configuration changes.
     *
     * @return {@code false}
     */
    @Override
    public boolean retryable() {
        return false;
    }
}
