package io.dlock.dynamodb.internal;

import io.dlock.spi.support.LeaseTimes;
import io.dlock.LockBackendException;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition: conditional writes, a ticket in the item's line while it waits, and between
 * tries the core's jittered backoff.
 *
 * <p>The first try writes at once: an uncontended acquire is one round trip. It wins only a free
 * lock with nobody in line (or a crashed holder's lock, see below). Once the lock was found taken,
 * each further try first reads the item (strongly consistent, a fifth of the price of a write and
 * no write capacity) and then makes at most one write, chosen by what it read:
 * <ul>
 *   <li>a grant, when the lock is free, or its record version has been seen unchanged for a whole
 *       lease time on this client's ticker (the lease rule, see {@link Sightings}), and nobody is in
 *       line or this attempt's ticket is first (the grant takes it out of the line);
 *   <li>a skip of the first ticket in line, when its holder left its turn unused for its ticket
 *       time on this client's ticker (a waiter that crashed or stalled);
 *   <li>a ticket at the end of the line, when this attempt has none there: from then on only the
 *       tickets ahead of it can take the lock before it, and a client that releases and asks again
 *       at once queues behind it.
 * </ul>
 * A zero-wait try never queues (it would only leave the line again), but it does skip a ripe head,
 * so that repeated {@code tryAcquire()} calls get past the tickets of crashed waiters. A busy
 * answer carries a retry hint: the time left until a takeover or a skip would be allowed, a
 * quarter of the ticket time while in line (so that a live waiter is never skipped), and a pace
 * that starts at the waiter's place in line times the client's retry base whenever the line moves
 * or the lock changes hands and grows with half the time since, so that a waiter about to be first
 * notices a short hold quickly and a long one cheaply (see {@link #pace}).
 *
 * <p>An interrupt never turns into a backend failure here. A try that starts with the thread
 * already interrupted runs normally (so {@code tryAcquire()} works for a thread with a pending
 * interrupt, as with every backend) and keeps the flag. A try interrupted while it waits for its
 * answer stops waiting at once and reports busy, remembering that a grant or a ticket may have been
 * written so that {@link #abandon()} undoes it. Either way the core finds the flag after the busy
 * answer and ends a blocking caller's acquisition with {@link InterruptedException}, abandoning it.
 * The core's calls come one at a time.
 */
final class DynamoDbAttempt implements AcquireAttempt<Void> {

    private static final Logger LOG = LoggerFactory.getLogger(DynamoDbAttempt.class);

    /** The shortest retry hint: the core's +1 ms rounds up, and a zero hint would spin. */
    private static final long MIN_HINT = TimeUnit.MILLISECONDS.toNanos(1);

    private final DynamoDbLockBackend backend;
    private final AcquireRequest request;
    private final Sightings sightings;
    private final long ticketMillis;
    private int tickets;
    /** The ticket this attempt last put in line, or null. */
    private String ticket;
    /** Where the ticket was last seen in line; negative when not seen there. */
    private int index = -1;
    /** A ticket may be in line: {@link #abandon()} takes it out. */
    private boolean maybeQueued;
    private boolean foundTaken;
    private boolean outcomeUnknown;
    private boolean finished;
    /** The grant (token, held or released) and place in line the pace counts from, and since when. */
    private long paceToken = -1;
    private boolean paceHeld;
    private int paceIndex = -1;
    private long paceSince;
    /** When the current try's requests must have ended: one operation timeout after it began. */
    private long deadline;

    DynamoDbAttempt(DynamoDbLockBackend backend, AcquireRequest request) {
        this.backend = backend;
        this.request = request;
        this.sightings = backend.sightings();
        this.ticketMillis = ticketMillis(request.leaseTime(), backend.retryCap());
    }

    /**
     * The ticket time: how long a waiter first in line may leave a free lock untaken before others
     * skip it. Four of its longest polls (a waiter in line polls at least once per retry cap and
     * per quarter ticket time), so that only a waiter that stalled or died is skipped; and never
     * longer than its lease time, so that a dead waiter blocks a lock no longer than a dead holder.
     *
     * @param lease the waiter's lease time
     * @param retryCap the waiter's longest retry pause
     * @return the ticket time in whole milliseconds, at least 1
     */
    static long ticketMillis(Duration lease, Duration retryCap) {
        // compared as a quarter lease: four times a cap of any size would overflow
        return LeaseTimes.ceilMillis(retryCap.compareTo(lease.dividedBy(4)) < 0 ? retryCap.multipliedBy(4) : lease);
    }

    @Override
    public AttemptResult<Void> tryOnce() {
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

    private AttemptResult<Void> tryOnce(boolean interruptible) {
        // a try makes up to three requests (write, read, write on the line); they share one operation timeout
        deadline = backend.deadline();
        if (!foundTaken) {
            Sightings.Sighting s = sightings.get(request.name());
            // a version seen ripe by an earlier attempt of this client, still to be checked by the write
            String seen = s != null && s.takeoverRipe(backend.ticker().nanoTime()) ? s.rvn() : null;
            return grant(DynamoDbLockBackend.GrantKind.PLAIN, seen, interruptible, true);
        }
        LockItem item;
        try {
            item = backend.read(request.name(), "acquire", deadline, interruptible);
        } catch (Failures.Interrupted e) {
            return AttemptResult.busy(); // a read changes nothing
        }
        return next(item, interruptible, false);
    }

    /**
     * Decides from an item what to write, and writes it.
     *
     * @param first whether this is the first try's second look: then only a skip may be written
     */
    private AttemptResult<Void> next(LockItem item, boolean interruptible, boolean first) {
        String name = request.name();
        long now = backend.ticker().nanoTime(); // after the answer, so after the write it shows
        if (item.free() && item.queue().isEmpty()) {
            sightings.forget(name);
            return first ? busy(MIN_HINT) : grant(DynamoDbLockBackend.GrantKind.PLAIN, null, interruptible, false);
        }
        if (request.ownerId().equals(item.owner())) {
            // granted by a write whose answer was lost: grant again, so that validity counts from a request of this try
            return first ? busy(MIN_HINT) : grant(DynamoDbLockBackend.GrantKind.AGAIN, null, interruptible, false);
        }
        Sightings.Sighting s = sightings.saw(name, item, now);
        index = ticket == null ? -1 : item.queue().indexOf(ticket);
        boolean takeable = item.free() || s.takeoverRipe(now);
        if (!first && takeable && (item.queue().isEmpty() || index == 0)) {
            return grant(item.queue().isEmpty() ? DynamoDbLockBackend.GrantKind.PLAIN : DynamoDbLockBackend.GrantKind.HEAD,
                    item.free() ? null : s.rvn(), interruptible, false);
        }
        DynamoDbLockBackend.QueueAnswer answer = null;
        try {
            if (index != 0 && s.skipRipe(now) && s.rvn() != null) {
                answer = backend.skip(name, s.rvn(), s.head(), deadline, interruptible);
            } else if (!first && index < 0) {
                ticket = LockItem.ticket(request.ownerId(), tickets++, ticketMillis);
                maybeQueued = true;
                answer = backend.enqueue(name, ticket, deadline, interruptible);
            } else {
                return hint(item, s, now);
            }
        } catch (Failures.Interrupted e) {
            return AttemptResult.busy();
        }
        if (answer == null || answer.item().rvn() == null) {
            return busy(MIN_HINT); // a renewal transaction held the item, or the item is gone: look again
        }
        item = answer.item();
        now = backend.ticker().nanoTime();
        s = sightings.saw(name, item, now);
        index = ticket == null ? -1 : item.queue().indexOf(ticket);
        return hint(item, s, now);
    }

    private AttemptResult<Void> grant(DynamoDbLockBackend.GrantKind kind, String seenRvn, boolean interruptible, boolean first) {
        String name = request.name();
        DynamoDbLockBackend.Outcome outcome;
        try {
            outcome = backend.acquire(request, kind, seenRvn, ticket, deadline, interruptible);
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
        foundTaken = true;
        if (outcome.item() == null) {
            return AttemptResult.busy(); // held and being renewed in a transaction at this very moment
        }
        if (!first) {
            // another client's write came between this try's read and its write: look again soon
            long now = backend.ticker().nanoTime();
            LockItem item = outcome.item();
            if (item.free() && item.queue().isEmpty()) {
                sightings.forget(name);
                return busy(MIN_HINT);
            }
            Sightings.Sighting s = sightings.saw(name, item, now);
            index = ticket == null ? -1 : item.queue().indexOf(ticket);
            return hint(item, s, now);
        }
        return next(outcome.item(), interruptible, true);
    }

    /** Busy, with the time until something may change for this attempt as the hint. */
    private AttemptResult<Void> hint(LockItem item, Sightings.Sighting s, long now) {
        boolean mayTake = item.queue().isEmpty() || index == 0;
        if (mayTake && (item.free() || s.takeoverRipe(now))) {
            return busy(MIN_HINT);
        }
        long wait = Long.MAX_VALUE;
        if (mayTake) {
            wait = s.takeoverRemaining(now); // held: the lease rule
        } else if (s.rvn() != null) {
            wait = s.skipRemaining(now); // someone else is first in line: the ticket rule
        }
        if (index >= 0) {
            wait = Math.min(wait, Math.min(TimeUnit.MILLISECONDS.toNanos(ticketMillis) / 4, pace(item, now)));
        }
        return wait == Long.MAX_VALUE ? AttemptResult.busy() : busy(wait);
    }

    /**
     * How soon a waiter in line looks again: right after the line moved or the lock changed hands
     * (as far as this waiter has seen), its place in line times the client's retry base (the
     * first two: the retry base), then half the time since, up to the retry cap. A line that moves
     * quickly is followed closely, and most closely by those about to be first; a long hold costs
     * each waiter a few reads more than the backoff alone.
     */
    private long pace(LockItem item, long now) {
        boolean held = !item.free();
        if (item.token() != paceToken || held != paceHeld || index != paceIndex) {
            paceToken = item.token();
            paceHeld = held;
            paceIndex = index;
            paceSince = now;
        }
        long base = backend.retryBase().toNanos();
        long cap = Math.max(base, backend.retryCap().toNanos());
        long place = Math.max(1, index);
        long floor = base > cap / place ? cap : base * place;
        return Math.max(floor, Math.min(cap, (now - paceSince) / 2));
    }

    private static AttemptResult<Void> busy(long nanos) {
        return AttemptResult.busy(Duration.ofNanos(Math.max(MIN_HINT, nanos)));
    }

    // turn(maxWait): the default. DynamoDB cannot notify a waiter: the core's timer, bounded by the busy
    // answers' hints (the pace of the line), paces the tries, and no thread waits

    @Override
    public void abandon() {
        if (finished) {
            return;
        }
        finished = true;
        if (outcomeUnknown) {
            backend.abandon(request); // never throws: what fails is retried in the background
        }
        if (maybeQueued) {
            try {
                backend.dequeue(request.name(), ticket, index);
            } catch (RuntimeException e) {
                LOG.debug("dlock: could not take the ticket {} out of the line of lock '{}'; other clients skip it "
                        + "after its ticket time ({} ms)", ticket, request.name(), ticketMillis, e);
            }
        }
    }

    @Override
    public String toString() {
        return "DynamoDbAttempt{" + request.name() + "}";
    }
}
