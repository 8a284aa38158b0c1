package io.dlock.spi;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The answer to one {@link AcquireAttempt#tryOnce()}: {@link Granted} (the lock is this attempt's,
 * with its fencing token and the backend's state for the grant) or {@link Busy} (someone else
 * holds it, with an optional hint of when to try again). Immutable and thread-safe.
 *
 * <p>The core tells them apart with {@code instanceof}:
 * <pre>{@code
 * AttemptResult<S> r = attempt.tryOnce();
 * if (r instanceof AttemptResult.Granted<S> g) { ... g.fencingToken(), g.state() ... }
 * }</pre>
 *
 * @param <S> the backend's per-grant state type
 */
public sealed interface AttemptResult<S> permits AttemptResult.Granted, AttemptResult.Busy {

    /**
     * A grant, with no earlier lease start.
     *
     * @param fencingToken the grant's token, positive
     * @param state what the backend needs later to renew and release this grant (it comes back as
     *     {@link Grant#state()}), or {@code null} for a backend that needs none
     * @param <S> the backend's per-grant state type
     * @return the result
     * @throws IllegalArgumentException if {@code fencingToken} is not positive
     */
    static <S> Granted<S> granted(long fencingToken, S state) {
        return new Granted<>(fencingToken, state, OptionalLong.empty());
    }

    /**
     * A grant whose server-side lease started before the granting request was sent: a lease
     * shared by many keys (etcd) runs from its last refresh, not from the grant. The core then
     * counts validity from {@code leaseStartNanos} when it is earlier than the attempt's send time.
     *
     * @param fencingToken the grant's token, positive
     * @param state the backend's state of the grant, or {@code null}
     * @param leaseStartNanos a reading of the context's ticker taken before the request that
     *     last started or refreshed the server-side lease was sent
     * @param <S> the backend's per-grant state type
     * @return the result
     * @throws IllegalArgumentException if {@code fencingToken} is not positive
     */
    static <S> Granted<S> granted(long fencingToken, S state, long leaseStartNanos) {
        return new Granted<>(fencingToken, state, OptionalLong.of(leaseStartNanos));
    }

    /**
     * Busy, with no hint.
     *
     * @param <S> the backend's per-grant state type
     * @return the result
     */
    static <S> Busy<S> busy() {
        return new Busy<>(Optional.empty());
    }

    /**
     * Busy, with a hint: the holder's lease ends on the server after about {@code retryAfter}, so
     * a waiter need not sleep longer than that before the next attempt.
     *
     * @param retryAfter the hint, or {@code null} for none
     * @param <S> the backend's per-grant state type
     * @return the result
     * @throws IllegalArgumentException if {@code retryAfter} is negative
     */
    static <S> Busy<S> busy(Duration retryAfter) {
        return new Busy<>(Optional.ofNullable(retryAfter));
    }

    /**
     * The lock was granted to this attempt.
     *
     * @param fencingToken the grant's fencing token, positive
     * @param state the backend's state of the grant, handed back in {@link Grant#state()}; may be
     *     {@code null}
     * @param leaseStartNanos when the server-side lease started, if before the granting request
     *     was sent (a ticker reading); empty when the lease starts with the grant
     * @param <S> the backend's per-grant state type
     */
    record Granted<S>(long fencingToken, S state, OptionalLong leaseStartNanos) implements AttemptResult<S> {

        /**
         * Checks the grant.
         *
         * @param fencingToken the grant's fencing token, positive
         * @param state the backend's state of the grant, possibly {@code null}
         * @param leaseStartNanos when the server-side lease started, if before the request
         * @throws IllegalArgumentException if {@code fencingToken} is not positive or
         *     {@code leaseStartNanos} is {@code null}
         */
        public Granted {
            if (fencingToken <= 0) {
                throw new IllegalArgumentException("fencingToken must be positive, was " + fencingToken);
            }
            if (leaseStartNanos == null) {
                throw new IllegalArgumentException("leaseStartNanos must not be null (use OptionalLong.empty())");
            }
        }

        /**
         * When validity starts on the core's clock: the earlier of the attempt's send time and the
         * server-side lease's start, so that validity never outlasts the lease on the server.
         *
         * @param sentNanos the ticker reading the core took just before {@link AcquireAttempt#tryOnce()}
         * @return the earlier of {@code sentNanos} and {@link #leaseStartNanos()} (compared as
         *     ticker readings, which may wrap)
         */
        public long validFrom(long sentNanos) {
            if (leaseStartNanos.isPresent() && leaseStartNanos.getAsLong() - sentNanos < 0) {
                return leaseStartNanos.getAsLong();
            }
            return sentNanos;
        }
    }

    /**
     * Someone else holds the lock.
     *
     * @param retryAfter about when the holder's lease ends on the server, if the backend knows: a
     *     waiter need not sleep longer than that before its next attempt
     * @param <S> the backend's per-grant state type
     */
    record Busy<S>(Optional<Duration> retryAfter) implements AttemptResult<S> {

        /**
         * Checks the hint.
         *
         * @param retryAfter about when the holder's lease ends on the server, if known
         * @throws IllegalArgumentException if {@code retryAfter} is {@code null} or holds a
         *     negative duration
         */
        public Busy {
            if (retryAfter == null) {
                throw new IllegalArgumentException("retryAfter must not be null (use Optional.empty())");
            }
            if (retryAfter.isPresent() && retryAfter.get().isNegative()) {
                throw new IllegalArgumentException("retryAfter must not be negative, was " + retryAfter.get());
            }
        }
    }
}
