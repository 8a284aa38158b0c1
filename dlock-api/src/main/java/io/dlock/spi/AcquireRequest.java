package io.dlock.spi;

import java.time.Duration;

/**
 * What one acquisition asks of the backend.
 *
 * @param name the lock name, already validated by the core
 * @param ownerId a fresh, unguessable owner id for this grant (32 hex digits)
 * @param leaseTime the lease time; at least {@link LockBackend#minimumLeaseTime()}
 */
public record AcquireRequest(String name, String ownerId, Duration leaseTime) { }
