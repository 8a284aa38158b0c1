package io.dlock.spi;

import io.dlock.LostReason;

/**
 * Where a backend reports what it learns on its own, outside any call from the core. Thread-safe;
 * calls return quickly (listeners run elsewhere).
 */
public interface BackendEvents {

    /**
     * The backend can no longer vouch for any lease of this client (a session was suspended or
     * expired): the core marks every held lease lost at once.
     *
     * @param reason usually {@link LostReason#SESSION_LOST}
     */
    void allLeasesLost(LostReason reason);

    /**
     * The backend learned that one lease is no longer held (its key was deleted, say).
     *
     * @param lock the lease
     * @param reason usually {@link LostReason#SUPERSEDED}
     */
    void leaseLost(HeldLock lock, LostReason reason);
}
