package io.dlock.dynamodb.internal;

import io.dlock.LockBackendException;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition: conditional writes, and between them the core's jittered backoff.
 *
 * <p>The first try writes at once: an uncontended acquire is one round trip. Once the lock was
 * found held, each further try first reads the item (strongly consistent, a fifth of the price of
 * a write and no write capacity) and writes only when the read says the write can win: the lock
 * is free, or its record version has been seen unchanged for a whole lease time on this client's
 * ticker (the waiter rule, see {@link Sightings}). A busy answer carries the time left until that
 * rule would allow a takeover as the retry hint.
 *
 * <p>An interrupt never turns into a backend failure here. A try that starts with the thread
 * already interrupted runs normally (so {@code tryAcquire()} works for a thread with a pending
 * interrupt, as with every backend) and keeps the flag. A try interrupted while it waits for its
 * answer stops waiting at once and reports busy, remembering that a grant may have been made so that
 * {@link #abandon()} undoes it. Either way the core's next {@link #awaitTurn(Duration)} throws
 * {@link InterruptedException}. Used by one thread at a time.
 */
final class DynamoDbAttempt implements AcquireAttempt {

    private static final Logger LOG = LoggerFactory.getLogger(DynamoDbAttempt.class);

    private final DynamoDbLockBackend backend;
    private final AcquireRequest request;
    private final Sightings sightings;
    private boolean foundHeld;
    private boolean outcomeUnknown;
    private boolean finished;

    DynamoDbAttempt(DynamoDbLockBackend backend, AcquireRequest request) {
        this.backend = backend;
        this.request = request;
        this.sightings = backend.sightings();
    }

    @Override
    public AttemptResult tryOnce() {
        // a pending interrupt is the caller's to handle after this try; one that comes during it cuts it short
        boolean interrupted = Thread.interrupted();
        try {
            return tryOnce(!interrupted);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private AttemptResult tryOnce(boolean interruptible) {
        String name = request.name();
        String seenRvn = null;
        if (foundHeld) {
            LockItem item;
            try {
                item = backend.read(name, "acquire", interruptible);
            } catch (Failures.Interrupted e) {
                return AttemptResult.busy(); // a read changes nothing
            }
            long now = backend.ticker().nanoTime();
            if (item.free()) {
                sightings.forget(name);
            } else if (!request.ownerId().equals(item.owner())) {
                Sightings.Sighting s = sightings.saw(name, item, now);
                if (!s.ripe(now)) {
                    return busy(s, now);
                }
                seenRvn = s.rvn();
            }
        } else {
            Sightings.Sighting s = sightings.get(name);
            if (s != null && s.ripe(backend.ticker().nanoTime())) {
                seenRvn = s.rvn(); // seen by an earlier attempt of this client, still to be checked by the write
            }
        }
        DynamoDbLockBackend.Outcome outcome;
        try {
            outcome = backend.acquire(request, seenRvn, interruptible);
        } catch (Failures.Interrupted e) {
            outcomeUnknown = true;
            return AttemptResult.busy();
        } catch (LockBackendException e) {
            outcomeUnknown = true;
            throw e;
        }
        if (outcome.granted()) {
            finished = true;
            sightings.forget(name);
            return AttemptResult.granted(outcome.token(), null);
        }
        foundHeld = true;
        long now = backend.ticker().nanoTime(); // after the answer, so after the write it shows
        if (outcome.item() == null) {
            return AttemptResult.busy(); // held and being renewed in a transaction at this very moment
        }
        if (outcome.item().free()) {
            sightings.forget(name); // freed between the failed write and the read that followed it
            return AttemptResult.busy();
        }
        return busy(sightings.saw(name, outcome.item(), now), now);
    }

    private static AttemptResult busy(Sightings.Sighting s, long now) {
        // the +1 ms of the core rounds up; never a zero hint, which would spin
        return AttemptResult.busy(Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(1), s.remaining(now))));
    }

    @Override
    public void awaitTurn(Duration maxWait) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted while waiting for lock '" + request.name() + "'");
        }
        long nanos = maxWait.toNanos();
        if (nanos > 0) {
            TimeUnit.NANOSECONDS.sleep(nanos);
        }
    }

    @Override
    public void abandon() {
        if (finished) {
            return;
        }
        finished = true;
        if (outcomeUnknown) {
            try {
                backend.abandon(request);
            } catch (RuntimeException e) {
                LOG.debug("dlock: could not undo a possible grant of lock '{}'; another client takes it over one "
                        + "lease time ({}) after its last write", request.name(), request.leaseTime(), e);
            }
        }
    }

    @Override
    public String toString() {
        return "DynamoDbAttempt{" + request.name() + "}";
    }
}
