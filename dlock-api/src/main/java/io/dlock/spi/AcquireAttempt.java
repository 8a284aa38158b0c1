package io.dlock.spi;

import java.time.Duration;

/**
 * One acquisition in progress, driven by the core: {@code tryOnce}, and while busy
 * {@code awaitTurn}, until a grant or the caller's deadline, then {@code abandon} if no grant was
 * kept.
 *
 * <p>A backend that queues contenders on the server (sequential nodes, for instance) keeps its
 * place in the queue in this object between calls and removes it in {@link #abandon()}.
 *
 * <p><b>The rules</b> (see also {@link io.dlock.spi}):
 * <ul>
 *   <li>{@link #tryOnce()} returns or throws {@link io.dlock.LockBackendException} within the
 *       context's operation timeout; {@link #awaitTurn(Duration)} within its {@code maxWait}.</li>
 *   <li>An interrupted {@code tryOnce} throws {@code LockBackendException} (or returns, if the
 *       answer is already in) and leaves the thread's interrupt flag set; an interrupted
 *       {@code awaitTurn} throws {@link InterruptedException} (flag cleared, as usual).</li>
 *   <li>{@link #abandon()} never throws and is idempotent.</li>
 *   <li>The core makes one call at a time on an attempt (never two in flight), each call
 *       happening-before the next, so an attempt needs no synchronization of its own even if its
 *       calls come from different threads; {@code abandon} may come after a {@code tryOnce} that
 *       threw, and is the last call.</li>
 * </ul>
 *
 * @param <S> the backend's per-grant state type
 */
public interface AcquireAttempt<S> {

    /**
     * Makes one attempt. The core reads its monotonic clock just before calling, and validity
     * runs from that moment (or from {@link AttemptResult.Granted#leaseStartNanos()} if earlier),
     * so the attempt must not reuse an answer from an earlier request.
     *
     * @return {@link AttemptResult.Granted} with its fencing token and state, or
     *     {@link AttemptResult.Busy}; never {@code null}
     * @throws io.dlock.LockBackendException if the outcome is unknown (failure, timeout,
     *     interrupt); the core then calls {@link #abandon()}, which must undo a grant the server
     *     may have made
     */
    AttemptResult<S> tryOnce();

    /**
     * Waits until another attempt is worth making, at most {@code maxWait}: a backend that can be
     * notified of release returns as soon as it is; others just sleep. The core bounds
     * {@code maxWait} by its backoff and the caller's deadline.
     *
     * @param maxWait the longest wait, not negative
     * @throws InterruptedException if the thread is interrupted
     * @throws io.dlock.LockBackendException if the backend fails
     */
    void awaitTurn(Duration maxWait) throws InterruptedException;

    /**
     * Gives up: leaves nothing held or queued on the server, including a grant whose answer was
     * lost (owner-checked). Idempotent; best-effort (what it cannot remove within its budget ends
     * by expiry on the server); never throws, also when the thread is interrupted. The core calls
     * it with the interrupt flag cleared and restores the flag afterwards.
     */
    void abandon();
}
