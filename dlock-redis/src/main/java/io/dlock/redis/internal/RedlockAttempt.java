package io.dlock.redis.internal;

import io.dlock.LockBackendException;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Redlock acquisition: a round of the two phases per try ({@link RedlockBackend#tryRound}),
 * and between tries a turn that a release notice on any node completes.
 *
 * <p>As in the kit's {@link io.dlock.spi.support.ListeningAttempt} (which listens on one channel;
 * this listens on one per node), a node's notice counts only if its subscription was confirmed
 * when the try began; until then the turn waits for the confirmation. A dead node's subscriber
 * wakes the turn at each failed reconnection (about once a second), else the core's poll paces the
 * tries. No thread waits: the subscribers' reader threads complete the stages. The core's calls
 * come one at a time.
 */
final class RedlockAttempt implements AcquireAttempt<Void> {

    private static final Logger LOG = LoggerFactory.getLogger(RedlockAttempt.class);

    private final RedlockBackend backend;
    private final AcquireRequest request;
    private final int nodes;
    private ReleaseSubscriber.Topic[] topics;
    private final boolean[] confirmedAtTry;
    private final long[] generationAtTry;
    private int rounds;
    private RedlockBackend.Round current;
    private boolean outcomeUnknown;
    private boolean finished;
    /** The last turn's per-node stages: completed at the next try so the topics drop them. */
    private CompletableFuture<?>[] lastTurn;

    RedlockAttempt(RedlockBackend backend, AcquireRequest request) {
        this.backend = backend;
        this.request = request;
        this.nodes = backend.nodes().size();
        this.confirmedAtTry = new boolean[nodes];
        this.generationAtTry = new long[nodes];
    }

    @Override
    public AttemptResult<Void> tryOnce() {
        if (topics != null) {
            for (int i = 0; i < nodes; i++) {
                confirmedAtTry[i] = topics[i].confirmed();
                generationAtTry[i] = topics[i].changes().generation();
            }
        }
        current = new RedlockBackend.Round(request, ++rounds);
        AttemptResult<Void> result;
        try {
            result = backend.tryRound(current);
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
        List<RedlockBackend.Node> all = backend.nodes();
        if (topics == null) {
            topics = new ReleaseSubscriber.Topic[nodes];
            for (int i = 0; i < nodes; i++) {
                topics[i] = all.get(i).subscriber.register(backend.keys().released(request.name()));
            }
        }
        CompletableFuture<Void> any = new CompletableFuture<>();
        lastTurn = new CompletableFuture<?>[nodes];
        for (int i = 0; i < nodes; i++) {
            CompletableFuture<Void> stage = confirmedAtTry[i] ? topics[i].changes().changeAfter(generationAtTry[i])
                    : all.get(i).subscriber.confirmation(topics[i]);
            lastTurn[i] = stage;
            stage.whenComplete((v, e) -> any.complete(null));
        }
        return any;
    }

    private void dropLastTurn() {
        if (lastTurn != null) {
            for (CompletableFuture<?> f : lastTurn) {
                f.complete(null);
            }
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
            backend.abandon(request, current); // never throws: what fails is retried in the background
        }
    }

    private void stopListening() {
        dropLastTurn();
        if (topics != null) {
            List<RedlockBackend.Node> all = backend.nodes();
            for (int i = 0; i < nodes; i++) {
                all.get(i).subscriber.unregister(topics[i]);
                confirmedAtTry[i] = false;
            }
            topics = null;
        }
    }

    @Override
    public String toString() {
        return "RedlockAttempt{" + request.name() + "}";
    }
}
