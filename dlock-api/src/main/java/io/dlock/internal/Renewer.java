package io.dlock.internal;

import io.dlock.LostReason;
import io.dlock.Ticker;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.RenewOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renews a client's auto-renewed leases, batched: one pass renews every lease that is due, or
 * will be within a quarter of its renew interval, in as few backend calls as the batch size
 * allows. Passes are scheduled for the earliest due time; the I/O runs on the worker, never on the
 * timer thread, so expiry timers stay on time while a renewal hangs.
 *
 * @param <S> the backend's per-grant state type
 */
final class Renewer<S> {

    private static final Logger LOG = LoggerFactory.getLogger(Renewer.class);

    /** The most leases renewed in one backend call. */
    static final int BATCH = 256;

    private final LockBackend<S> backend;
    private final Ticker ticker;
    private final Scheduler scheduler;
    private final Executor worker;
    private final Set<DefaultLease<S>> leases = ConcurrentHashMap.newKeySet();
    private final ReentrantLock passLock = new ReentrantLock();
    /** Whether a pass has been handed to the worker and has not taken {@link #passLock} yet. */
    private final java.util.concurrent.atomic.AtomicBoolean passQueued = new java.util.concurrent.atomic.AtomicBoolean();
    private final Object scheduleLock = new Object();
    private Scheduler.Task next; // guarded by scheduleLock
    private long nextAt; // guarded by scheduleLock
    private boolean scheduled; // guarded by scheduleLock
    private volatile boolean stopped;

    Renewer(LockBackend<S> backend, Ticker ticker, Scheduler scheduler, Executor worker) {
        this.backend = backend;
        this.ticker = ticker;
        this.scheduler = scheduler;
        this.worker = worker;
    }

    void add(DefaultLease<S> lease) {
        leases.add(lease);
        scheduleAt(lease.nextRenewAt());
    }

    void remove(DefaultLease<S> lease) {
        leases.remove(lease);
    }

    int size() {
        return leases.size();
    }

    void stop() {
        stopped = true;
        synchronized (scheduleLock) {
            if (next != null) {
                next.cancel();
            }
            scheduled = false;
        }
    }

    private static long slack(DefaultLease<?> lease) {
        return lease.renewNanos() / 4;
    }

    private void scheduleAt(long at) {
        if (stopped) {
            return;
        }
        synchronized (scheduleLock) {
            if (scheduled && at - nextAt >= 0) {
                return;
            }
            if (next != null) {
                next.cancel();
            }
            scheduled = true;
            nextAt = at;
            next = scheduler.schedule(this::onTimer, at - ticker.nanoTime());
        }
    }

    private void onTimer() {
        synchronized (scheduleLock) {
            scheduled = false;
            next = null;
        }
        // at most one pass waits to run (queued, or waiting for the running one to finish): it renews
        // whatever is due once it starts, so a timer that fires meanwhile adds nothing, and timers never
        // pile up worker threads behind a slow pass
        if (!passQueued.compareAndSet(false, true)) {
            return;
        }
        try {
            worker.execute(this::pass);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            passQueued.set(false); // client closing
        }
    }

    /** Renews what is due and schedules the next pass. */
    void pass() {
        if (stopped) {
            return;
        }
        passLock.lock();
        passQueued.set(false); // from here on, what falls due after `now` needs another pass
        try {
            long now = ticker.nanoTime();
            List<DefaultLease<S>> due = new ArrayList<>();
            for (DefaultLease<S> lease : leases) {
                if (lease.nextRenewAt() - slack(lease) - now <= 0) {
                    due.add(lease);
                }
            }
            for (int from = 0; from < due.size() && !stopped; from += BATCH) {
                renewBatch(due.subList(from, Math.min(due.size(), from + BATCH)));
            }
        } finally {
            passLock.unlock();
        }
        // the next pass runs when the earliest lease is due, not a slack early: the slack only
        // lets that pass take along the leases due soon after (scheduling a slack early would
        // renew every lease at 3/4 of its interval, and retry a failed renewal at once)
        long earliest = 0;
        boolean any = false;
        for (DefaultLease<S> lease : leases) {
            long at = lease.nextRenewAt();
            if (!any || at - earliest < 0) {
                earliest = at;
                any = true;
            }
        }
        if (any) {
            scheduleAt(earliest);
        }
    }

    /**
     * Renews one batch and applies the outcome to each lease: renewed, lost (not held), or failed
     * (unknown: retried while valid). A thrown failure, or an answer of the wrong size or with a
     * null outcome, counts as a failure of every lease in the batch.
     */
    private void renewBatch(List<DefaultLease<S>> batch) {
        long sentAt = ticker.nanoTime();
        List<Grant<S>> grants = new ArrayList<>(batch.size());
        for (DefaultLease<S> lease : batch) {
            grants.add(lease.grant());
            lease.renewalSent(sentAt);
        }
        List<RenewOutcome> outcomes;
        try {
            outcomes = backend.renew(java.util.Collections.unmodifiableList(grants));
        } catch (RuntimeException e) {
            failAll(batch, e);
            LOG.debug("dlock: renewal of {} leases failed", batch.size(), e);
            return;
        }
        boolean nullOutcome = false;
        if (outcomes != null) {
            for (RenewOutcome o : outcomes) { // not contains(null): List.of(...) throws for it
                nullOutcome |= o == null;
            }
        }
        if (outcomes == null || outcomes.size() != batch.size() || nullOutcome) {
            failAll(batch, new IllegalStateException("backend answered " + (outcomes == null ? "null"
                    : outcomes.size() + " outcome(s)" + (nullOutcome ? " with a null" : ""))
                    + " to a renewal of " + batch.size() + " (it must answer one outcome per grant, in order)"));
            return;
        }
        long now = ticker.nanoTime();
        for (int i = 0; i < batch.size(); i++) {
            RenewOutcome outcome = outcomes.get(i);
            DefaultLease<S> lease = batch.get(i);
            if (outcome instanceof RenewOutcome.Renewed) {
                lease.renewed(sentAt);
            } else if (outcome instanceof RenewOutcome.NotHeld) {
                lease.lost(LostReason.SUPERSEDED);
            } else if (outcome instanceof RenewOutcome.Unknown unknown) {
                lease.renewFailed(unknown.cause(), now);
            }
        }
    }

    private void failAll(List<DefaultLease<S>> batch, RuntimeException cause) {
        long now = ticker.nanoTime();
        for (DefaultLease<S> lease : batch) {
            lease.renewFailed(cause, now);
        }
    }
}
