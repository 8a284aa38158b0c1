package io.dlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * A handle on one named lock of one {@link LockClient}. Cheap to create, thread-safe, holds no
 * state on the server by itself: every successful acquire returns a new {@link Lease}.
 *
 * <p>Contention is not an error: a lock held by someone else gives {@link Optional#empty()}.
 * A backend failure gives an unchecked {@link LockBackendException} within the client's
 * operation timeout, never a false grant; a {@link LockConfigurationException} (not
 * {@link LockBackendException#retryable() retryable}) when the backend refused the configuration
 * itself (credentials, permission, a missing table, TLS). An acquire that times out, is
 * interrupted or is cancelled leaves nothing held.
 *
 * <p>A lease time the backend does not allow is the caller's mistake, an
 * {@link IllegalArgumentException} naming {@code leaseTime}, on every backend at the same two
 * points: when the handle is made ({@link LockClient#lock(String, LockOptions)}) and when each
 * acquire starts, before anything is sent, since a backend's bounds can change meanwhile
 * (ZooKeeper's longest lease is the session timeout it negotiates on each connection).
 *
 * <p>Threads that share a client exclude each other: a second thread waits for the first
 * thread's lease to end, in arrival order, and only one thread per lock and client waits on the
 * server at a time.
 */
public interface DistributedLock {

    /** @return the lock's name */
    String name();

    /** @return the lease settings of grants from this handle */
    LockOptions options();

    /**
     * Makes one attempt, without waiting.
     *
     * @return the lease, or empty if the lock is held (by another client or another thread)
     * @throws IllegalArgumentException if the lease time is outside the backend's bounds now
     * @throws LockBackendException if the backend fails or times out
     * @throws IllegalStateException if the client is closed
     */
    Optional<Lease> tryAcquire();

    /**
     * Waits up to {@code maxWait} for the lock.
     *
     * @param maxWait how long to wait; zero makes one attempt
     * @return the lease, or empty if the wait ran out
     * @throws IllegalArgumentException if {@code maxWait} is null or negative, or the lease time is
     *     outside the backend's bounds now
     * @throws InterruptedException if the thread is interrupted while waiting; nothing is held
     * @throws LockBackendException if the backend fails or times out
     * @throws IllegalStateException if the client is closed before or during the wait
     */
    Optional<Lease> tryAcquire(Duration maxWait) throws InterruptedException;

    /**
     * Waits as long as it takes for the lock.
     *
     * @return the lease
     * @throws IllegalArgumentException if the lease time is outside the backend's bounds now
     * @throws InterruptedException if the thread is interrupted while waiting; nothing is held
     * @throws LockBackendException if the backend fails or times out
     * @throws IllegalStateException if the client is closed before or during the wait
     */
    Lease acquire() throws InterruptedException;

    /**
     * Waits up to {@code maxWait} for the lock without blocking the caller, and without holding a
     * thread while it waits: a pending future is a place in the client's queue or a wait for the
     * backend's notification, and only its tries run, on the client's worker (or the
     * {@link LockClientConfig.Builder#executor executor} it was given), where the future then
     * completes. Waiters of one client, asynchronous or blocking, are served in arrival order.
     * Cancelling the future stops the wait and leaves nothing held: a wait ends at once, a try in
     * flight is not interrupted but runs out (within the operation timeout), and a grant that
     * arrives after cancellation is released.
     *
     * @param maxWait how long to wait
     * @return a future of the lease, or of empty if the wait ran out; it completes exceptionally
     *     with {@link LockBackendException}, {@link IllegalStateException} or
     *     {@link IllegalArgumentException} as the synchronous methods would throw them
     * @throws IllegalArgumentException if {@code maxWait} is null or negative
     * @throws IllegalStateException if the client is closed
     */
    CompletableFuture<Optional<Lease>> acquireAsync(Duration maxWait);

    /**
     * Runs an action while holding the lock, then releases it.
     *
     * @param maxWait how long to wait for the lock
     * @param action what to run; it receives the lease, to read its fencing token or check it
     * @return true if the action ran, false if the lock could not be had within {@code maxWait}
     * @throws IllegalArgumentException if an argument is null or {@code maxWait} is negative
     * @throws InterruptedException if interrupted while waiting
     * @throws LockBackendException if the backend fails or times out while acquiring
     * @throws RuntimeException whatever the action throws, after the lease is released
     */
    boolean withLock(Duration maxWait, Consumer<? super Lease> action) throws InterruptedException;
}
