package io.dlock;

import io.dlock.spi.support.Arguments;
import java.time.Duration;
import java.util.Optional;

/**
 * Who holds a lock, as the backend saw it when asked. A snapshot: it may be stale by the time it
 * is read. Immutable and thread-safe.
 */
public final class LockHolder {

    private final String lockName;
    private final String ownerId;
    private final long fencingToken;
    private final Duration remaining;

    /**
     * Creates a snapshot.
     *
     * @param lockName the lock
     * @param ownerId the holder's per-grant owner id
     * @param fencingToken the holder's fencing token
     * @param remaining the server-side remaining lease time, or {@code null} if unknown
     */
    public LockHolder(String lockName, String ownerId, long fencingToken, Duration remaining) {
        this.lockName = Arguments.notNull("lockName", lockName);
        this.ownerId = Arguments.notNull("ownerId", ownerId);
        this.fencingToken = fencingToken;
        this.remaining = remaining;
    }

    /** @return the lock name */
    public String lockName() {
        return lockName;
    }

    /** @return the owner id of the grant that holds the lock; matches {@link Lease#ownerId()} */
    public String ownerId() {
        return ownerId;
    }

    /** @return the fencing token of the current grant */
    public long fencingToken() {
        return fencingToken;
    }

    /** @return the remaining lease time as the server reported it, where the backend can tell */
    public Optional<Duration> remaining() {
        return Optional.ofNullable(remaining);
    }

    @Override
    public String toString() {
        return "LockHolder{" + lockName + ", token=" + fencingToken
                + (remaining == null ? "" : ", remaining=" + remaining) + "}";
    }
}
