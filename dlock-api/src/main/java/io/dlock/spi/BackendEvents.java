package io.dlock.spi;

import io.dlock.LostReason;

/**
 * Where a backend reports what it learns on its own, outside any call from the core. Thread-safe;
 * calls return quickly (listeners run elsewhere) and never throw.
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
     * The backend learned that one grant is no longer held (its key was deleted, say). The grant
     * is named by the owner id of its {@link AcquireRequest}, unique per grant, so a backend can
     * report a grant it made before the core has seen it: the core ignores an owner id it holds no
     * lease for.
     *
     * @param ownerId the grant's owner id
     * @param reason usually {@link LostReason#SUPERSEDED}
     */
    void leaseLost(String ownerId, LostReason reason);
}
