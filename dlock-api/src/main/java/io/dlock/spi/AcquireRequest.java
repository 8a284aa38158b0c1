package io.dlock.spi;

import io.dlock.spi.support.Arguments;
import java.time.Duration;

/**
 * What one acquisition asks of the backend.
 *
 * @param name the lock name, already validated by the core
 * @param ownerId a fresh, unguessable owner id for this grant (32 hex digits)
 * @param leaseTime the lease time; at least {@link LockBackend#minimumLeaseTime()}
 */
public record AcquireRequest(String name, String ownerId, Duration leaseTime) {

    /**
     * @throws IllegalArgumentException if an argument is {@code null} or {@code leaseTime} is not
     *     positive
     */
    public AcquireRequest {
        Arguments.notNull("name", name);
        Arguments.notNull("ownerId", ownerId);
        Arguments.positive("leaseTime", leaseTime);
    }
}
