package io.dlock.spi;

import java.time.Duration;
import java.util.Optional;

/**
 * The answer to one {@link AcquireAttempt#tryOnce()}: a grant with its fencing token and the
 * backend's state for the held lock, or busy with an optional hint of when to try again.
 */
public final class AttemptResult {

    private static final AttemptResult BUSY = new AttemptResult(false, 0, null, null);

    private final boolean granted;
    private final long token;
    private final Object state;
    private final Duration retryAfter;

    private AttemptResult(boolean granted, long token, Object state, Duration retryAfter) {
        this.granted = granted;
        this.token = token;
        this.state = state;
        this.retryAfter = retryAfter;
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
        return new AttemptResult(true, fencingToken, state, null);
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
        return retryAfter == null ? BUSY : new AttemptResult(false, 0, null, retryAfter);
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

    /** @return the retry hint of a busy answer */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(retryAfter);
    }
}
