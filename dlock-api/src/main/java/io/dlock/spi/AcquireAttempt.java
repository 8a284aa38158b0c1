package io.dlock.spi;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One acquisition in progress, driven by the core: {@code tryOnce}, and while busy {@code turn},
 * until a grant or the caller's deadline, then {@code abandon} if no grant was kept.
 *
 * <p>A backend that queues contenders on the server (sequential nodes, for instance) keeps its
 * place in the queue in this object between calls and removes it in {@link #abandon()}.
 *
 * <p><b>Waiting holds no thread.</b> Between two tries the core does not block: it asks
 * {@link #turn(Duration)} for a stage that completes when another try is worth making, and waits
 * for the first of that stage and its own timer of {@code maxWait}. A backend with release
 * notifications (pub/sub, a watch) completes the stage from the notification's callback; one
 * without them keeps the default, and the core's timer paces the tries. So a client's threads do
 * not grow with its waiters, blocking or asynchronous, whatever the backend.
 *
 * <p><b>The rules</b> (see also {@link io.dlock.spi}):
 * <ul>
 *   <li>{@link #tryOnce()} returns or throws {@link io.dlock.LockBackendException} within the
 *       context's operation timeout. {@link #turn(Duration)} returns at once: it may start an
 *       asynchronous request (a watch, a subscription) but never waits for it, nor for the lock,
 *       nor starts or holds a thread per waiting attempt.</li>
 *   <li>An interrupted {@code tryOnce} throws {@code LockBackendException} (or returns, if the
 *       answer is already in) and leaves the thread's interrupt flag set. {@code turn} never
 *       blocks, so it has no interrupt to honour: the core answers a caller's interrupt (or a
 *       cancel) by no longer waiting for the stage, and abandons.</li>
 *   <li>{@link #abandon()} never throws and is idempotent.</li>
 *   <li>The core makes one call at a time on an attempt (never two in flight), each call
 *       happening-before the next, so an attempt needs no synchronization for its calls even if
 *       they come from different threads; {@code abandon} may come after a {@code tryOnce} that
 *       threw, and is the last call. What a backend's own threads touch (a notification that
 *       completes the stage while the core is elsewhere) must be thread-safe.</li>
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
     * Tells the core when another try is worth making, without waiting: returns a stage that
     * completes when the lock may have changed (a release notification, a watch firing, the
     * connection coming back, the attempt's own queue entry gone). The core tries again at the
     * first of that stage and {@code maxWait} on its own timer, so a backend completes the stage
     * early or not at all; completing it late is harmless. A spurious completion costs one try.
     *
     * <p>Return a new stage per call (the core adds a callback to each; a stage returned again and
     * again without completing would gather them), already complete if the next try is worth
     * making now. Complete it normally or exceptionally: either means "try again", and the next
     * {@code tryOnce} reports what is wrong. The core never completes or cancels the stage.
     * Throwing {@link io.dlock.LockBackendException} fails the acquisition, as a failed
     * {@code tryOnce} does.
     *
     * <p>The default returns a stage that never completes: the core's timer (its backoff, bounded
     * by the busy answer's retry hint and the caller's deadline) paces the tries. That is right
     * for a backend that cannot be told of a release.
     *
     * @param maxWait how long the core will wait at most before its next try, positive
     * @return the stage; never {@code null}
     * @throws io.dlock.LockBackendException if the backend fails
     */
    default CompletionStage<Void> turn(Duration maxWait) {
        return new CompletableFuture<>();
    }

    /**
     * Gives up: leaves nothing held or queued on the server, including a grant whose answer was
     * lost (owner-checked). Idempotent; best-effort (what it cannot remove within its budget ends
     * by expiry on the server); never throws, also when the thread is interrupted. The core calls
     * it with the interrupt flag cleared and restores the flag afterwards.
     */
    void abandon();
}
