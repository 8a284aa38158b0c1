package io.dlock.postgres.internal;

import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.support.ChangeSignal;
import io.dlock.spi.support.ListeningAttempt;
import java.util.concurrent.CompletableFuture;

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
 * <p>The waiting is the kit's {@link ListeningAttempt}: a notice sent before this client's LISTEN
 * is active would be missed, so the first turn's stage completes when the LISTEN connection is up,
 * for another try; after that, a stage completes at a notice of the name that arrived after the
 * try began (or a change of the LISTEN connection), and the core's {@code maxWait} bounds the
 * wait, so a lost notice costs at most one poll interval. No thread waits: the LISTEN reader
 * signals the name's {@link ChangeSignal}. The core makes one call at a time on an attempt.
 */
final class PgAttempt extends ListeningAttempt<Void, PgNotifications.Topic> {

    private final PgLockBackend backend;
    private final AcquireRequest request;
    /** Tries made; a waiting attempt's tries after the first may take the place next in line. */
    private int tries;
    /** The server's time of this attempt's first busy answer (microseconds), or -1. */
    private long since = -1;
    /** Whether this attempt may hold the place next in line: abandon() gives it up. */
    private boolean ticketed;

    PgAttempt(PgLockBackend backend, AcquireRequest request) {
        super(request.name());
        this.backend = backend;
        this.request = request;
    }

    @Override
    protected AttemptResult<Void> attempt() {
        PgLockBackend.Tried tried = backend.acquire(request, tries++ > 0, since);
        AttemptResult<Void> result = tried.result();
        ticketed = tried.ticketed();
        if (since < 0 && tried.serverMicros() > 0 && result instanceof AttemptResult.Busy) {
            since = tried.serverMicros();
        }
        return result;
    }

    @Override
    protected PgNotifications.Topic listen() {
        return backend.notifications().register(request.name());
    }

    @Override
    protected ChangeSignal changes(PgNotifications.Topic topic) {
        return topic.changes;
    }

    @Override
    protected boolean ready(PgNotifications.Topic topic) {
        return backend.notifications().listening();
    }

    @Override
    protected CompletableFuture<Void> whenReady(PgNotifications.Topic topic) {
        return backend.notifications().whenListening();
    }

    @Override
    protected void unlisten(PgNotifications.Topic topic) {
        backend.notifications().unregister(topic);
    }

    /** This attempt may hold the place next in line: abandon gives it up. */
    @Override
    protected boolean undoNeeded() {
        return ticketed;
    }

    @Override
    protected void undo() {
        backend.abandon(request); // never throws
    }
}
