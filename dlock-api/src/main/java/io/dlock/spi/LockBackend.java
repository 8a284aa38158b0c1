package io.dlock.spi;

import io.dlock.Capability;
import io.dlock.LockHolder;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * One client's connection to a backend: the remote primitives the core drives.
 *
 * <p>Every method that does I/O must return or throw {@link io.dlock.LockBackendException}
 * within the context's operation timeout, and must be thread-safe: the core calls them from the
 * acquiring threads, its renewal thread and its close path concurrently.
 */
public interface LockBackend extends AutoCloseable {

    /** @return the guarantees this backend gives beyond the base contract */
    Set<Capability> capabilities();

    /**
     * The shortest lease time the backend can honour; shorter requests are rejected with
     * {@link IllegalArgumentException} when a lock handle is created.
     *
     * @return the minimum lease time
     */
    default Duration minimumLeaseTime() {
        return Duration.ofMillis(10);
    }

    /**
     * The longest lease time the backend can honour safely; longer requests are rejected with
     * {@link IllegalArgumentException} when a lock handle is created. A backend whose leases are
     * bounded by a session (ZooKeeper) returns the session timeout: a holder's validity must
     * never outlast what the server guarantees.
     *
     * @return the maximum lease time
     */
    default Duration maximumLeaseTime() {
        return Duration.ofDays(365);
    }

    /**
     * Starts one acquisition; no I/O. The core calls {@link AcquireAttempt#tryOnce()} on it until
     * a grant or the caller's deadline, then {@link AcquireAttempt#abandon()} if it gave up.
     *
     * @param request the lock name, the fresh owner id and the lease time
     * @return the attempt
     */
    AcquireAttempt newAttempt(AcquireRequest request);

    /**
     * Renews held leases for their lease time, each only if its owner still holds it. Batched: a
     * backend should renew many leases in one round trip where it can.
     *
     * @param locks the leases to renew
     * @return for each lease, in order, true if it was renewed and false if the backend says this
     *     owner no longer holds it
     * @throws io.dlock.LockBackendException if the outcome is unknown
     */
    boolean[] renew(List<? extends HeldLock> locks);

    /**
     * Releases a lease, only if its owner still holds it: a stale or repeated release must never
     * affect a newer holder.
     *
     * @param lock the lease
     * @return true if this call released it, false if the owner no longer held it
     * @throws io.dlock.LockBackendException if the outcome is unknown
     */
    boolean release(HeldLock lock);

    /**
     * Tells who holds a lock now.
     *
     * @param name the lock
     * @return the holder, or empty if free
     * @throws UnsupportedOperationException unless {@link Capability#HOLDER_QUERY} is declared
     * @throws io.dlock.LockBackendException if the backend fails or times out
     */
    default Optional<LockHolder> holder(String name) {
        throw new UnsupportedOperationException("this backend cannot tell who holds a lock");
    }

    /** Closes connections and stops every thread the backend started. Never throws. */
    @Override
    void close();
}
