package io.dlock.spi;

import java.time.Duration;

/**
 * One acquisition in progress, driven by the core: {@code tryOnce}, and while busy
 * {@code awaitTurn}, until a grant or the caller's deadline. Used by one thread at a time.
 *
 * <p>A backend that queues contenders on the server (sequential nodes, for instance) keeps its
 * place in the queue in this object between calls and removes it in {@link #abandon()}.
 */
public interface AcquireAttempt {

    /**
     * Makes one attempt. The core reads its monotonic clock just before calling, and validity
     * runs from that moment, so the attempt must not reuse an answer from an earlier request.
     *
     * @return a grant with its fencing token, or busy
     * @throws io.dlock.LockBackendException if the outcome is unknown; the core then calls
     *     {@link #abandon()}, which must undo a grant the server may have made
     */
    AttemptResult tryOnce();

    /**
     * Waits until another attempt is worth making, at most {@code maxWait}: a backend that can be
     * notified of release returns as soon as it is; others just sleep. The core bounds
     * {@code maxWait} by its backoff and the caller's deadline.
     *
     * @param maxWait the longest wait
     * @throws InterruptedException if the thread is interrupted
     * @throws io.dlock.LockBackendException if the backend fails
     */
    void awaitTurn(Duration maxWait) throws InterruptedException;

    /**
     * Gives up: leaves nothing held or queued on the server, including a grant whose answer was
     * lost (owner-checked). Idempotent; best-effort; never throws.
     */
    void abandon();
}
