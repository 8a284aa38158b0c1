package io.dlock.redis.internal;

import io.dlock.LockBackendException;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition: the acquire script until a grant, and between tries a wait for a release
 * notice on the name's channel.
 *
 * <p>A release published before this client's subscription is active would be missed, so the
 * first wait only subscribes and waits for the server's confirmation, then returns for another
 * try; a wait counts as notified only by a notice that arrived after a try that began with the
 * subscription confirmed. Every wait is bounded by the core's {@code maxWait}, so a lost notice or
 * a broken pub/sub connection costs at most one poll interval. Used by one thread at a time.
 */
final class RedisAttempt implements AcquireAttempt<Void> {

    private static final Logger LOG = LoggerFactory.getLogger(RedisAttempt.class);

    private final RedisLockBackend backend;
    private final AcquireRequest request;
    private ReleaseSubscriber.Topic topic;
    private boolean confirmedAtTry;
    private long generationAtTry;
    private boolean outcomeUnknown;
    private boolean finished;

    RedisAttempt(RedisLockBackend backend, AcquireRequest request) {
        this.backend = backend;
        this.request = request;
    }

    @Override
    public AttemptResult<Void> tryOnce() {
        if (topic != null) {
            confirmedAtTry = topic.confirmed();
            generationAtTry = topic.generation();
        }
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

    @Override
    public void awaitTurn(Duration maxWait) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted while waiting for lock '" + request.name() + "'");
        }
        if (maxWait.isZero() || maxWait.isNegative()) {
            return;
        }
        long deadline = System.nanoTime() + Math.min(maxWait.toNanos(), Long.MAX_VALUE / 4);
        ReleaseSubscriber subscriber = backend.subscriber();
        if (topic == null) {
            topic = subscriber.register(backend.keys().released(request.name()));
        }
        if (!confirmedAtTry) {
            // subscribe first; the next try then sees any release made before the subscription
            subscriber.awaitConfirmed(topic, deadline);
            return;
        }
        topic.awaitChange(generationAtTry, deadline);
    }

    @Override
    public void abandon() {
        if (finished) {
            return;
        }
        finished = true;
        try {
            stopListening();
        } catch (RuntimeException e) {
            LOG.debug("dlock: unsubscribing lock '{}' failed", request.name(), e);
        }
        if (outcomeUnknown) {
            backend.abandon(request); // never throws: what fails is retried in the background
        }
    }

    private void stopListening() {
        if (topic != null) {
            backend.subscriber().unregister(topic);
            topic = null;
            confirmedAtTry = false;
        }
    }

    @Override
    public String toString() {
        return "RedisAttempt{" + request.name() + "}";
    }
}
