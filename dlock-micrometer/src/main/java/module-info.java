/**
 * Micrometer meters for dlock: a {@link io.dlock.LockListener} that records acquires, waits,
 * hold times, renewals, lost leases and held locks.
 */
module io.dlock.micrometer {
    requires transitive io.dlock;
    requires transitive micrometer.core;

    exports io.dlock.micrometer;
}
