package io.dlock;

/** Why a {@link LeaderElection} stopped being the leader; passed to {@link ElectionListener#onRevoked}. */
public enum RevokeReason {
    /** {@link LeaderElection#resign()} was called: leadership is handed to another candidate. */
    RESIGNED,
    /**
     * The lease behind the leadership ended without a release: renewals did not succeed in time,
     * the backend said someone else holds the lock, or the backend session ended.
     */
    LOST,
    /** {@link LeaderElection#close()} was called, while leading. */
    CLOSED
}
