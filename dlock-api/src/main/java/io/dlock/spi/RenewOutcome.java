package io.dlock.spi;

import io.dlock.LockBackendException;

/**
 * What {@link LockBackend#renew(java.util.List)} says about one grant: {@link Renewed},
 * {@link NotHeld} or {@link Unknown}. Immutable and thread-safe.
 */
public sealed interface RenewOutcome permits RenewOutcome.Renewed, RenewOutcome.NotHeld, RenewOutcome.Unknown {

    /**
     * The grant was renewed for its lease time, counted from when the renewal request was sent.
     *
     * @return the outcome
     */
    static RenewOutcome renewed() {
        return Renewed.INSTANCE;
    }

    /**
     * The server answered that this owner no longer holds the lock (its lease ended, or the lock
     * was taken over): the core reports the lease lost at once.
     *
     * @return the outcome
     */
    static RenewOutcome notHeld() {
        return NotHeld.INSTANCE;
    }

    /**
     * The renewal of this grant failed with an unknown outcome: the core treats it as a failed
     * renewal of this lease only, and retries while the lease is still valid.
     *
     * @param cause why
     * @return the outcome
     * @throws IllegalArgumentException if {@code cause} is {@code null}
     */
    static RenewOutcome unknown(LockBackendException cause) {
        return new Unknown(cause);
    }

    /** The grant was renewed. Use {@link RenewOutcome#renewed()}. */
    record Renewed() implements RenewOutcome {
        private static final Renewed INSTANCE = new Renewed();
    }

    /** This owner no longer holds the lock. Use {@link RenewOutcome#notHeld()}. */
    record NotHeld() implements RenewOutcome {
        private static final NotHeld INSTANCE = new NotHeld();
    }

    /**
     * The outcome is unknown (the request failed, timed out, or its answer was lost).
     *
     * @param cause why, as it would have been thrown
     */
    record Unknown(LockBackendException cause) implements RenewOutcome {

        /**
         * Checks the cause.
         *
         * @param cause why the outcome is unknown
         * @throws IllegalArgumentException if {@code cause} is {@code null}
         */
        public Unknown {
            if (cause == null) {
                throw new IllegalArgumentException("cause must not be null");
            }
        }
    }
}
