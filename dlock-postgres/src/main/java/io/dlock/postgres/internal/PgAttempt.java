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

    PgAttempt(PgLockBackend backend, AcquireRequest request) {
        this.backend = backend;
        this.request = request;
    }

    @Override
    public AttemptResult<Void> tryOnce() {
        atTry = topic == null ? null : backend.notifications().snapshot(topic);
        AttemptResult<Void> result;
        try {
            result = backend.acquire(request);
        } catch (LockBackendException e) {
            outcomeUnknown = true;
            throw e;
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
        if (outcomeUnknown) {
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
