package io.dlock.postgres.internal;

import io.dlock.LockBackendException;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One acquisition: the acquire statement until a grant, and between tries a turn that a release
 * notice of the name completes ({@link #turn}).
 *
 * <p>No waiter starves: from its second try on, a waiting attempt takes the lock's one place next
 * in line (the ticket) if nobody has it, its holder let it go stale, or this attempt has waited
 * longer (by the server's time of each attempt's first busy answer); a free lock goes only to the
 * ticket's holder while the ticket lives. A first try never takes the ticket, so a zero-wait
 * {@code tryAcquire()} stays one statement, and a client that releases and asks again at once
 * finds the lock promised to the longest waiter that has asked since.
 *
 * <p>A notice sent before this client's LISTEN is active would be missed, so the first turn's
 * stage completes when the LISTEN connection is up, for another try; after that, a stage completes
 * at a notice of the name that arrived after the try began (or a change of the LISTEN connection),
 * and the core's {@code maxWait} bounds the wait, so a lost notice costs at most one poll interval.
 * No thread waits: the LISTEN reader completes the stages. The core makes one call at a time on
 * an attempt.
 */
final class PgAttempt implements AcquireAttempt<Void> {

    private final PgLockBackend backend;
    private final AcquireRequest request;
    private PgNotifications.Topic topic;
    private PgNotifications.Snapshot atTry;
    private boolean outcomeUnknown;
    private boolean finished;
    /** The last turn's stage: stale once the next try starts, completed then so the lists drop it. */
    private CompletableFuture<Void> lastTurn;
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
     * The turn, in one place: a stage that a release notice of the name completes (the core bounds
     * the wait by {@code maxWait}).
     *
     * @param maxWait the longest the core waits
     * @return the stage
     */
    @Override
    public CompletionStage<Void> turn(Duration maxWait) {
        dropLastTurn();
        if (finished || maxWait.isZero() || maxWait.isNegative()) {
            return CompletableFuture.completedFuture(null);
        }
        PgNotifications notifications = backend.notifications();
        if (topic == null) {
            topic = notifications.register(request.name());
        }
        // listen first; the next try then sees any release made before the LISTEN was active
        lastTurn = atTry == null || !atTry.listening() ? notifications.whenListening()
                : notifications.changeAfter(topic, atTry);
        return lastTurn;
    }

    private void dropLastTurn() {
        if (lastTurn != null) {
            lastTurn.complete(null);
            lastTurn = null;
        }
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
        dropLastTurn();
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
