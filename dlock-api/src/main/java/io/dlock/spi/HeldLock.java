package io.dlock.spi;

import java.time.Duration;

/** A grant as the backend needs it to renew or release: the core's leases implement this. */
public interface HeldLock {

    /** @return the lock name */
    String name();

    /** @return the owner id the grant was requested with */
    String ownerId();

    /** @return the grant's fencing token */
    long fencingToken();

    /** @return the lease time the grant was requested with */
    Duration leaseTime();

    /** @return what the backend returned with the grant in {@link AttemptResult#granted}, or null */
    Object backendState();
}
