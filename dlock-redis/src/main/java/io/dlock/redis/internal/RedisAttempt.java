package io.dlock.redis.internal;

import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.support.ChangeSignal;
import io.dlock.spi.support.ListeningAttempt;
import java.util.concurrent.CompletableFuture;

/**
 * One acquisition: the acquire script until a grant, and between tries a turn that a release
 * notice on the name's channel completes.
 *
 * <p>The shape (subscribe first, wait for the server's confirmation, then for a notice after
 * what the try saw) is the kit's {@link ListeningAttempt}; this class supplies the script and the
 * subscription. A release published before this client's subscription is confirmed would be
 * missed, so the first turn completes at the confirmation, for another try. No thread waits: the
 * subscriber's reader thread signals the topic's {@link ChangeSignal}s.
 */
final class RedisAttempt extends ListeningAttempt<Void, ReleaseSubscriber.Topic> {

    private final RedisLockBackend backend;
    private final AcquireRequest request;

    RedisAttempt(RedisLockBackend backend, AcquireRequest request) {
        super(request.name());
        this.backend = backend;
        this.request = request;
    }

    @Override
    protected AttemptResult<Void> attempt() {
        return backend.acquire(request);
    }

    @Override
    protected ReleaseSubscriber.Topic listen() {
        return backend.subscriber().register(backend.keys().released(request.name()));
    }

    @Override
    protected ChangeSignal changes(ReleaseSubscriber.Topic topic) {
        return topic.changes();
    }

    @Override
    protected boolean ready(ReleaseSubscriber.Topic topic) {
        return topic.confirmed();
    }

    @Override
    protected CompletableFuture<Void> whenReady(ReleaseSubscriber.Topic topic) {
        return backend.subscriber().confirmation(topic);
    }

    @Override
    protected void unlisten(ReleaseSubscriber.Topic topic) {
        backend.subscriber().unregister(topic);
    }

    @Override
    protected void undo() {
        backend.abandon(request); // never throws: what fails is retried in the background
    }
}
