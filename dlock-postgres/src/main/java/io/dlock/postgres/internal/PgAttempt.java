package io.dlock.postgres.internal;

import io.dlock.LockBackendException;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import java.time.Duration;

/**
 * One acquisition: the acquire statement until a grant, and between tries a wait for a release
 * notice of the name ({@link #awaitTurn}).
 *
 * <p>No waiter starves: from its second try on, a waiting attempt takes the lock's one place next
 * in line (the ticket) if nobody has it, its holder let it go stale, or this attempt has waited
 * longer (by the server's time of each attempt's first busy answer); a free lock goes only to the
 * ticket's holder while the ticket lives. A first try never takes the ticket, so a zero-wait
 * {@code tryAcquire()} stays one statement, and a client that releases and asks again at once
 * finds the lock promised to the longest waiter that has asked since.
 *
 * <p>A notice sent before this client's LISTEN is active would be missed, so the first wait only
 * waits for the LISTEN connection to be up, then returns for another try; after that, a wait ends
 * at a notice of the name that arrived after the try began (or a change of the LISTEN connection),
 * or at the core's {@code maxWait}, so a lost notice costs at most one poll interval. The core
 * makes one call at a time on an attempt.
 */
final class PgAttempt implements AcquireAttempt<Void> {

    private final PgLockBackend backend;
    private final AcquireRequest request;
    private PgNotifications.Topic topic;
    private PgNotifications.Snapshot atTry;
    private boolean outcomeUnknown;
    private boolean finished;
    /** Tries made; a waiting attempt's tries after the first may take the place next in line. */
    private int tries;
    /** The server's time of this attempt's first busy answer (microseconds), or -1. */
    private long since = -1;
    /** Whether this attempt may hold the place next in line: abandon() gives it up. */
    private boolean ticketed;

    PgAttempt(PgLockBackend backend, AcquireRequest request) {
        this.backend = backend;
        this.request = request;
    }

    @Override
    public AttemptResult<Void> tryOnce() {
        atTry = topic == null ? null : backend.notifications().snapshot(topic);
        PgLockBackend.Tried tried;
        try {
            tried = backend.acquire(request, tries++ > 0, since);
        } catch (LockBackendException e) {
            outcomeUnknown = true;
            throw e;
        }
        AttemptResult<Void> result = tried.result();
        ticketed = tried.ticketed();
        if (since < 0 && tried.serverMicros() > 0 && result instanceof AttemptResult.Busy) {
            since = tried.serverMicros();
        }
        if (result instanceof AttemptResult.Granted) {
            finished = true;
            stopListening();
        }
        return result;
    }

    /**
     * The wait for a turn, in one place: a release notice of the name, or {@code maxWait}.
     *
     * @param maxWait the longest wait
     * @throws InterruptedException if interrupted
     */
    @Override
    public void awaitTurn(Duration maxWait) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted while waiting for lock '" + request.name() + "'");
        }
        if (maxWait.isZero() || maxWait.isNegative()) {
            return;
        }
        long deadline = System.nanoTime() + Math.min(maxWait.toNanos(), Long.MAX_VALUE / 4);
        PgNotifications notifications = backend.notifications();
        if (topic == null) {
            topic = notifications.register(request.name());
        }
        if (atTry == null || !atTry.listening()) {
            // listen first; the next try then sees any release made before the LISTEN was active
            notifications.awaitListening(deadline);
            return;
        }
        notifications.awaitChange(topic, atTry, deadline);
    }

    @Override
    public void abandon() {
        if (finished) {
            return;
        }
        finished = true;
        stopListening();
        if (outcomeUnknown || ticketed) {
            backend.abandon(request); // never throws
        }
    }

    private void stopListening() {
        if (topic != null) {
            backend.notifications().unregister(topic);
            topic = null;
            atTry = null;
        }
    }

    @Override
    public String toString() {
        return "PgAttempt{" + request.name() + "}";
    }
}
