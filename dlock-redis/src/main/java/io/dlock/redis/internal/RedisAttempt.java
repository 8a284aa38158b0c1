package io.dlock.redis.internal;

import io.dlock.LockBackendException;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition: the acquire script until a grant, and between tries a turn that a release
 * notice on the name's channel completes.
 *
 * <p>A release published before this client's subscription is active would be missed, so the
 * first turn only subscribes and completes at the server's confirmation, for another try; a turn
 * completes on a notice only if the notice arrived after a try that began with the subscription
 * confirmed. The core bounds every wait by its {@code maxWait}, so a lost notice or a broken
 * pub/sub connection costs at most one poll interval. No thread waits: the subscriber's reader
 * thread completes the stages. The core's calls come one at a time.
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
    /** The last turn's stage: stale once the next try starts, completed then so the topic drops it. */
    private CompletableFuture<Void> lastTurn;

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
    public CompletionStage<Void> turn(Duration maxWait) {
        dropLastTurn();
        if (finished || maxWait.isZero() || maxWait.isNegative()) {
            return CompletableFuture.completedFuture(null);
        }
        ReleaseSubscriber subscriber = backend.subscriber();
        if (topic == null) {
            topic = subscriber.register(backend.keys().released(request.name()));
        }
        // subscribe first; the next try then sees any release made before the subscription
        lastTurn = confirmedAtTry ? topic.changeAfter(generationAtTry) : subscriber.confirmation(topic);
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
        dropLastTurn();
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
