package io.dlock;

import java.time.Duration;
import java.util.function.Consumer;

/**
 * One grant of a lock. It stays valid while it is renewed and ends on {@link #release()}, on
 * expiry, or when the backend can no longer vouch for it.
 *
 * <p><b>Validity is conservative and local.</b> {@link #isValid()} is computed on this process's
 * monotonic clock from the moment the granting (or last renewing) request was <i>sent</i>, minus
 * a drift margin, so it turns false no later than the moment the server could give the lock to
 * someone else. It is still only a best effort against pauses that strike between the check and
 * the use: the protected resource should check the {@link #fencingToken()} and refuse any token
 * lower than the highest it has seen.
 *
 * <p>Thread-safe. {@link #close()} is {@link #release()}, so a lease fits try-with-resources.
 */
public interface Lease extends AutoCloseable {

    /** @return the name of the lock this lease holds */
    String lockName();

    /**
     * Returns the fencing token: positive and strictly greater than the token of every earlier
     * grant of this lock name, by any client, when the backend declares {@link Capability#FENCING}.
     *
     * @return the token
     */
    long fencingToken();

    /** @return the unguessable per-grant owner id (128 random bits) the backend knows this holder by */
    String ownerId();

    /**
     * Tells whether the lease is still valid on this process's clock.
     *
     * @return false once the lease is released, lost, or its validity has run out
     */
    boolean isValid();

    /**
     * Returns how long the lease stays valid if no renewal succeeds.
     *
     * @return the remaining validity; {@link Duration#ZERO} once not valid
     */
    Duration remaining();

    /**
     * Throws unless the lease is valid: call it right before a side effect.
     *
     * @throws LockLostException if the lease was lost or its validity ran out
     * @throws IllegalStateException if the lease was released by its holder
     */
    void ensureValid();

    /**
     * Registers a listener called once if the lease ends for any reason other than release. Runs
     * on a dlock thread, never while dlock holds internal locks; a listener added after the loss
     * runs at once on the caller's thread. Listeners must not block for long.
     *
     * @param listener the listener
     * @throws IllegalArgumentException if {@code listener} is null
     */
    void onLost(Consumer<? super LockLostException> listener);

    /**
     * Releases the lock on the server, if this lease still holds it, and stops renewing.
     * Idempotent and thread-safe. Never throws for backend failures: they are logged, and the
     * lock then ends by expiry on the server. Releasing a lease that was superseded never
     * affects the current holder.
     */
    void release();

    /** Same as {@link #release()}. */
    @Override
    void close();
}
