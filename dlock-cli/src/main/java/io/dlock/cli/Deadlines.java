package io.dlock.cli;

import java.time.Duration;

/**
 * When the watchdog of a command must send {@code SIGTERM} and {@code SIGKILL} if it hears nothing
 * more from dlock: the policy, on {@link System#nanoTime()} readings, apart from the processes.
 *
 * <ul>
 *   <li><b>SIGKILL</b> when the lease's validity ends (the last validity seen: a reading of zero,
 *       once the lease is lost or released, teaches nothing new), or {@code grace} after a stop
 *       was asked for, whichever comes first. So nothing of the command runs past its validity,
 *       which ends before the server can give the lock to anyone else.</li>
 *   <li><b>SIGTERM</b> {@code grace} before the validity ends, so that the command has its whole
 *       grace period, but never before the next renewal is a whole renew interval overdue (two
 *       intervals after the last one was seen): a healthy dlock renews every interval, and a
 *       SIGTERM any earlier would stop commands whose dlock is merely on time. When the grace
 *       period does not fit between the two, the command gets what is left of it. After a stop
 *       was asked for, at once.</li>
 * </ul>
 *
 * <p>Not thread-safe: {@link Child} guards it.
 */
final class Deadlines {

    /** A validity reading must move by more than this to count as a renewal (readings jitter by microseconds). */
    private static final long MOVED_NANOS = 1_000_000L;

    private final long renewNanos;
    private final long graceNanos;
    private boolean known;
    private long validUntil;
    private long renewedAt;
    private boolean stopping;
    private long stopAt;

    /**
     * Creates the policy for one run of a command.
     *
     * @param renewInterval how often dlock renews the lease
     * @param grace how long the command gets between SIGTERM and SIGKILL ({@code --grace})
     * @throws IllegalArgumentException if {@code renewInterval} is not positive or {@code grace} is negative
     */
    Deadlines(Duration renewInterval, Duration grace) {
        if (renewInterval == null || renewInterval.isNegative() || renewInterval.isZero()) {
            throw new IllegalArgumentException("renewInterval must be positive, was " + renewInterval);
        }
        if (grace == null || grace.isNegative()) {
            throw new IllegalArgumentException("grace must not be negative, was " + grace);
        }
        this.renewNanos = nanos(renewInterval);
        this.graceNanos = nanos(grace);
    }

    /** Nanoseconds, capped at about 73 years so that sums of them never overflow. */
    private static long nanos(Duration d) {
        long cap = Long.MAX_VALUE / 4;
        return d.compareTo(Duration.ofNanos(cap)) > 0 ? cap : d.toNanos();
    }

    /**
     * Takes a reading of the lease. Read the clock before the lease, so that {@code now +
     * remaining} never lies past the real end of the validity.
     *
     * @param now {@link System#nanoTime()} just before {@code remaining} was read
     * @param remaining the lease's remaining validity; zero once it is lost or released
     * @return true if the deadlines moved
     */
    boolean observe(long now, Duration remaining) {
        if (!remaining.isZero() && !remaining.isNegative()) {
            long until = now + nanos(remaining);
            if (!known || until - validUntil > MOVED_NANOS) {
                validUntil = until;
                renewedAt = now;
                known = true;
                return true;
            }
        } else if (!known) {
            validUntil = now; // never valid: no time at all
            renewedAt = now;
            known = true;
            return true;
        }
        return false;
    }

    /**
     * Asks for the command to be stopped: SIGTERM now, SIGKILL after the grace period (or when the
     * validity ends, if sooner). Later calls change nothing.
     *
     * @param now {@link System#nanoTime()}
     * @return true if this call asked for the stop
     */
    boolean stop(long now) {
        if (stopping) {
            return false;
        }
        stopping = true;
        stopAt = now;
        return true;
    }

    /** @return whether a stop was asked for */
    boolean stopping() {
        return stopping;
    }

    /**
     * Returns when SIGKILL is due; valid once {@link #observe} has been called.
     *
     * @return a {@link System#nanoTime()} instant
     */
    long killAt() {
        long at = validUntil;
        if (stopping && stopAt + graceNanos - at < 0) {
            at = stopAt + graceNanos;
        }
        return at;
    }

    /**
     * Returns when SIGTERM is due; never after {@link #killAt()}; valid once {@link #observe}
     * has been called.
     *
     * @return a {@link System#nanoTime()} instant
     */
    long termAt() {
        long at;
        if (stopping) {
            at = stopAt;
        } else {
            long graceBefore = validUntil - graceNanos;
            long overdue = renewedAt + 2 * renewNanos;
            at = graceBefore - overdue > 0 ? graceBefore : overdue;
        }
        long kill = killAt();
        return at - kill > 0 ? kill : at;
    }
}
