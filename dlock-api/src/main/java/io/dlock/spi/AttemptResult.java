package io.dlock.spi;

import java.time.Duration;
import java.util.Optional;

/**
 * The answer to one {@link AcquireAttempt#tryOnce()}: a grant with its fencing token and the
 * backend's state for the held lock, or busy with an optional hint of when to try again.
 */
public final class AttemptResult {

    private static final AttemptResult BUSY = new AttemptResult(false, 0, null, null, false, 0);

    private final boolean granted;
    private final long token;
    private final Object state;
    private final Duration retryAfter;
    private final boolean hasLeaseStart;
    private final long leaseStart;

    private AttemptResult(boolean granted, long token, Object state, Duration retryAfter, boolean hasLeaseStart,
                          long leaseStart) {
        this.granted = granted;
        this.token = token;
        this.state = state;
        this.retryAfter = retryAfter;
        this.hasLeaseStart = hasLeaseStart;
        this.leaseStart = leaseStart;
    }

    /**
     * A grant.
     *
     * @param fencingToken the grant's token, positive
     * @param state what the backend needs later to renew and release this grant (available as
     *     {@link HeldLock#backendState()}), or {@code null}
     * @return the result
     * @throws IllegalArgumentException if the token is not positive
     */
    public static AttemptResult granted(long fencingToken, Object state) {
        if (fencingToken <= 0) {
            throw new IllegalArgumentException("fencingToken must be positive, was " + fencingToken);
        }
        return new AttemptResult(true, fencingToken, state, null, false, 0);
    }

    /**
     * A grant whose server-side lease started before the granting request was sent: a lease
     * shared by many keys (etcd) runs from its last refresh, not from the grant. The core then
     * counts validity from {@code leaseStartNanos} instead of the attempt's send time.
     *
     * @param fencingToken the grant's token, positive
     * @param state the backend's state of the grant, or {@code null}
     * @param leaseStartNanos a reading of the context's ticker taken before the request that
     *     last started or refreshed the server-side lease was sent
     * @return the result
     * @throws IllegalArgumentException if the token is not positive
     */
    public static AttemptResult granted(long fencingToken, Object state, long leaseStartNanos) {
        if (fencingToken <= 0) {
            throw new IllegalArgumentException("fencingToken must be positive, was " + fencingToken);
        }
        return new AttemptResult(true, fencingToken, state, null, true, leaseStartNanos);
    }

    /**
     * Busy, with no hint.
     *
     * @return the result
     */
    public static AttemptResult busy() {
        return BUSY;
    }

    /**
     * Busy, with a hint: the holder's lease ends on the server after about {@code retryAfter}, so
     * a waiter need not sleep longer than that before the next attempt.
     *
     * @param retryAfter the hint, or {@code null} for none
     * @return the result
     */
    public static AttemptResult busy(Duration retryAfter) {
        return retryAfter == null ? BUSY : new AttemptResult(false, 0, null, retryAfter, false, 0);
    }

    /** @return whether the lock was granted */
    public boolean granted() {
        return granted;
    }

    /** @return the fencing token of a grant; 0 when busy */
    public long fencingToken() {
        return token;
    }

    /** @return the backend's state of a grant, possibly {@code null} */
    public Object state() {
        return state;
    }

    /**
     * Returns when the server-side lease of a grant started, if earlier than the request.
     *
     * @param sentNanos the ticker reading the core took before the attempt
     * @return the earlier of {@code sentNanos} and the lease start given to {@link #granted(long, Object, long)}
     */
    public long validFrom(long sentNanos) {
        return hasLeaseStart && leaseStart - sentNanos < 0 ? leaseStart : sentNanos;
    }

    /** @return the retry hint of a busy answer */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(retryAfter);
    }
}
