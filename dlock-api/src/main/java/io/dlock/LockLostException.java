package io.dlock;

import io.dlock.spi.support.Arguments;
/**
 * A lease ended for a reason other than its release: it expired on the holder's clock, the
 * backend said someone else owns the lock, or the backend session ended. Thrown by
 * {@link Lease#ensureValid()} and passed to {@link Lease#onLost} listeners.
 */
public class LockLostException extends LockException {

    private static final long serialVersionUID = 1L;

    /** @serial the token of the lost lease */
    private final long fencingToken;
    /** @serial why the lease ended */
    private final LostReason reason;

    /**
     * Creates an exception.
     *
     * @param lockName the lock whose lease was lost
     * @param fencingToken the token of the lost lease
     * @param reason why the lease ended
     */
    public LockLostException(String lockName, long fencingToken, LostReason reason) {
        super("lease on lock '" + Arguments.notNull("lockName", lockName) + "' (token " + fencingToken + ") lost: "
                + Arguments.notNull("reason", reason), lockName, null);
        this.fencingToken = fencingToken;
        this.reason = reason;
    }

    /**
     * Returns the fencing token of the lost lease.
     *
     * @return the token that must no longer be accepted by the protected resource
     */
    public long fencingToken() {
        return fencingToken;
    }

    /**
     * Returns why the lease ended.
     *
     * @return the reason; never {@code null}
     */
    public LostReason reason() {
        return reason;
    }
}
