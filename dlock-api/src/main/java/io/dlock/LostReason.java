package io.dlock;

/** Why a lease ended without being released by its holder. */
public enum LostReason {
    /** Validity ran out on the holder's clock: renewals did not succeed in time. */
    EXPIRED,
    /** The backend answered that this holder no longer owns the lock. */
    SUPERSEDED,
    /** The backend's session that vouched for the lease ended or could no longer be trusted. */
    SESSION_LOST
}
