package io.dlock.spi;

import java.time.Duration;

/**
 * A grant as its backend sees it, to renew or release it: made by the core from the backend's
 * {@link AttemptResult.Granted} and the {@link AcquireRequest}, and handed back to the same backend
 * only. It is not the user's {@link io.dlock.Lease}: a user cannot reach the backend's state, and a
 * backend cannot reach the user's lease. Immutable; thread-safe if {@code S} is.
 *
 * @param name the lock name
 * @param ownerId the owner id the grant was requested with; unique per grant, so it names the
 *     grant in {@link BackendEvents#leaseLost(String, io.dlock.LostReason)}
 * @param fencingToken the grant's fencing token, positive
 * @param leaseTime the lease time the grant was requested with, positive
 * @param state what the backend returned with the grant in {@link AttemptResult.Granted#state()},
 *     possibly {@code null}
 * @param <S> the backend's per-grant state type
 */
public record Grant<S>(String name, String ownerId, long fencingToken, Duration leaseTime, S state) {

    /**
     * Checks the grant.
     *
     * @param name the lock name
     * @param ownerId the owner id the grant was requested with
     * @param fencingToken the grant's fencing token
     * @param leaseTime the lease time the grant was requested with
     * @param state the backend's state of the grant, possibly {@code null}
     * @throws IllegalArgumentException if {@code name}, {@code ownerId} or {@code leaseTime} is
     *     {@code null}, {@code fencingToken} is not positive or {@code leaseTime} is not positive
     */
    public Grant {
        if (name == null) {
            throw new IllegalArgumentException("name must not be null");
        }
        if (ownerId == null) {
            throw new IllegalArgumentException("ownerId must not be null");
        }
        if (fencingToken <= 0) {
            throw new IllegalArgumentException("fencingToken must be positive, was " + fencingToken);
        }
        if (leaseTime == null || leaseTime.isNegative() || leaseTime.isZero()) {
            throw new IllegalArgumentException("leaseTime must be positive, was " + leaseTime);
        }
    }

    /**
     * The grant made by an attempt for a request.
     *
     * @param request the request the attempt was made for
     * @param granted the backend's answer
     * @param <S> the backend's per-grant state type
     * @return the grant
     * @throws IllegalArgumentException if either is {@code null}
     */
    public static <S> Grant<S> of(AcquireRequest request, AttemptResult.Granted<S> granted) {
        if (request == null) {
            throw new IllegalArgumentException("request must not be null");
        }
        if (granted == null) {
            throw new IllegalArgumentException("granted must not be null");
        }
        return new Grant<>(request.name(), request.ownerId(), granted.fencingToken(), request.leaseTime(),
                granted.state());
    }

    @Override
    public String toString() {
        // the owner id is a credential of sorts (it lets a release through): shown shortened
        return "Grant{" + name + ", token=" + fencingToken + ", owner=" + ownerId.substring(0, Math.min(8,
                ownerId.length())) + "…, lease=" + leaseTime + ", state=" + state + "}";
    }
}
