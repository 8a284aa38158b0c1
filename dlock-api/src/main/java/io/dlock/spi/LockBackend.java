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
 * <p><b>The rules a backend keeps</b> (see also {@link io.dlock.spi}):
 * <ul>
 *   <li>Every method that does I/O returns or throws {@link io.dlock.LockBackendException} within
 *       the context's operation timeout ({@link BackendContext#operationTimeout()}).</li>
 *   <li>An interrupted call throws {@code LockBackendException} (or returns, if the answer is
 *       already in) and leaves the thread's interrupt flag set; it never swallows the interrupt.</li>
 *   <li>Every method is thread-safe: the core calls them concurrently from acquiring threads, its
 *       renewal pass and its close path.</li>
 *   <li>Bad arguments (a {@code null} list, say) get {@link IllegalArgumentException}; the core
 *       never passes them.</li>
 *   <li>A failure that every retry would meet too until someone changes the configuration
 *       (credentials or a permission refused, a missing table, a TLS mismatch, a server the
 *       backend cannot use) is a {@link io.dlock.LockConfigurationException} of its kind, told by
 *       what the client library or the server says in typed form (exception types, status and
 *       error codes) rather than by message text where they allow; everything else, notably no
 *       answer, is a retryable {@code LockBackendException}.</li>
 * </ul>
 *
 * <p><b>What the core guarantees in return:</b> it calls {@link #renew(List)} and
 * {@link #release(Grant)} only with grants this backend made (through an attempt of its own,
 * unchanged); it calls {@link #close()} last, once its own releases are done or given up (a call
 * already in flight may still be finishing); it drives each {@link AcquireAttempt} one call at a
 * time; lease times it passes lie between {@link #minimumLeaseTime()} and
 * {@link #maximumLeaseTime()}.
 *
 * @param <S> the backend's per-grant state: what it needs to renew and release a grant beyond the
 *     name, owner id, token and lease time ({@code Void} for none)
 */
public interface LockBackend<S> extends AutoCloseable {

    /** @return the guarantees this backend gives beyond the base contract; no I/O */
    Set<Capability> capabilities();

    /**
     * The shortest lease time the backend can honour; shorter requests are rejected with
     * {@link IllegalArgumentException} when a lock handle is created. No I/O.
     *
     * @return the minimum lease time
     */
    default Duration minimumLeaseTime() {
        return Duration.ofMillis(10);
    }

    /**
     * The longest lease time the backend can honour safely; longer requests are rejected with
     * {@link IllegalArgumentException} naming {@code leaseTime} by the core, when a lock handle is
     * created and again when each acquire starts, before {@link #newAttempt}. A backend whose
     * leases are bounded by a session (ZooKeeper) returns the session timeout: a holder's validity
     * must never outlast what the server guarantees. The value may change (a session renegotiated
     * on reconnection); the core reads it at each of those points. No I/O.
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
     * <p>A lease time outside the backend's bounds is the caller's mistake, never a
     * {@link io.dlock.LockBackendException}: the core checks it before this call, and a backend
     * that checks again throws {@link IllegalArgumentException} naming {@code leaseTime}, here or,
     * if its bound shrank during the attempt, from {@link AcquireAttempt#tryOnce()}.
     *
     * @param request the lock name, the fresh owner id and the lease time
     * @return the attempt
     * @throws IllegalArgumentException if the request is one this backend cannot serve, such as a
     *     lease time above {@link #maximumLeaseTime()}
     */
    AcquireAttempt<S> newAttempt(AcquireRequest request);

    /**
     * Renews held grants for their lease time, each only if its owner still holds it. Batched: a
     * backend should renew many grants in one round trip where it can.
     *
     * <p>Answers exactly one outcome per grant, in the same order: {@link RenewOutcome#renewed()},
     * {@link RenewOutcome#notHeld()} (the core reports the lease lost), or
     * {@link RenewOutcome#unknown(io.dlock.LockBackendException)} for a grant whose renewal failed
     * (the core retries it while the lease is valid). When part of a batch fails, the grants that
     * were renewed are still reported renewed. Throwing {@code LockBackendException} instead is
     * allowed and means {@code unknown} for every grant. The core treats a list of the wrong size
     * or with a {@code null} element as a failure of the whole batch.
     *
     * @param grants the grants to renew, each made by this backend; not empty
     * @return the outcomes, one per grant, in order
     * @throws io.dlock.LockBackendException if the outcome is unknown for the whole batch
     */
    List<RenewOutcome> renew(List<Grant<S>> grants);

    /**
     * Releases a grant, only if its owner still holds it: a stale or repeated release must never
     * affect a newer holder.
     *
     * @param grant the grant, made by this backend
     * @return {@link ReleaseOutcome#RELEASED} if this call released it,
     *     {@link ReleaseOutcome#NOT_HELD} if the owner no longer held it
     * @throws io.dlock.LockBackendException if the outcome is unknown
     */
    ReleaseOutcome release(Grant<S> grant);

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

    /**
     * Closes connections and stops every thread the backend started, within about the operation
     * timeout. Idempotent; never throws. The core calls it once its own releases are done.
     */
    @Override
    void close();
}
