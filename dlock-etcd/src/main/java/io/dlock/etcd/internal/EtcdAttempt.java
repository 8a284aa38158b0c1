package io.dlock.etcd.internal;

import io.dlock.spi.support.LeaseTimes;
import io.dlock.LockBackendException;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition: its own key (the client's reusable key of the name when no other acquisition of
 * the client uses it, else one named by its owner id), created on the first try and attached to the
 * client's lease; the lock is held when no key of the name has a lower create revision. In between,
 * it waits for the deletion of its immediate predecessor (FIFO, no herd) and of its own key (its
 * lease died while it waited: it then fails, it is never granted). While those watches are in place
 * and quiet, a try answers "busy" without a request, reading the queue at least once a second.
 *
 * <p>Used by one thread at a time; watch callbacks on jetcd's threads only complete futures and
 * set flags.
 */
final class EtcdAttempt implements AcquireAttempt<EtcdGrant> {

    private static final Logger LOG = LoggerFactory.getLogger(EtcdAttempt.class);

    private static final long WATCH_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    /**
     * While the watches are in place and have reported nothing, a try answers "busy" without a
     * request for up to this long after the last read of the queue: the watches would have told of
     * the one change that can make this acquisition the oldest (the deletion of its predecessor).
     * The read after it is a safety net against a watch that stopped without saying so.
     */
    private static final long VERIFY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final EtcdLockBackend backend;
    private final AcquireRequest request;
    private final String name;
    private ByteSequence ownKey;
    /** Whether {@link #ownKey} is the client's reusable key of the name (else the owner id's key). */
    private boolean sharedPath;
    private final ByteSequence namePrefix;
    private final long ttlSeconds;
    private final long staleNanos;
    private final ByteSequence ownerValue;

    private EtcdLease lease;
    private boolean keyMaybeWritten;
    /**
     * The keys that a copy of this acquisition's create, sent on {@link #lease} and not answered,
     * may still make later (empty if none): its end must guard against them.
     */
    private final List<ByteSequence> uncertainKeys = new ArrayList<>();
    private long ownRevision;
    private long checkedAt;
    /** When the queue was last read, on {@link System#nanoTime()}. */
    private long readAt;
    private ByteSequence predecessor;
    private Watch.Watcher predecessorWatch;
    private ByteSequence watchedPredecessor;
    private Watch.Watcher ownWatch;
    private volatile boolean ownKeyDeleted;
    private volatile boolean predecessorDeleted;
    private volatile boolean watchFailed;
    private long watchAgainAt;
    private boolean watchPaused;
    private volatile CompletableFuture<Void> wake = new CompletableFuture<>();
    private boolean finished;

    EtcdAttempt(EtcdLockBackend backend, AcquireRequest request) {
        this.backend = backend;
        this.request = request;
        this.name = request.name();
        // the client's own key of the name when no other acquisition of this client uses it, so that
        // successive acquisitions put the same key again rather than leave a deleted key per
        // acquisition in the name's range (etcd keeps those until compaction, and every read of the
        // queue would walk them all); else a key of this acquisition's own
        this.sharedPath = backend.claimPath(name, this);
        this.ownKey = backend.keys().key(name, sharedPath ? backend.pathId() : request.ownerId());
        this.namePrefix = backend.keys().namePrefix(name);
        this.ttlSeconds = LeaseTimes.ceilSeconds(request.leaseTime());
        // a grant refreshes the lease first if its last refresh is older than 5% of the lease time, so
        // that the holder's validity and the key's life on the server both run a full lease from the grant
        this.staleNanos = request.leaseTime().toNanos() / 20;
        this.ownerValue = ByteSequence.from(request.ownerId(), java.nio.charset.StandardCharsets.UTF_8);
    }

    @Override
    public AttemptResult<EtcdGrant> tryOnce() {
        if (finished) {
            throw new IllegalStateException("this attempt at lock '" + name + "' has ended");
        }
        backend.ensureOpen(name);
        long deadline = backend.calls().deadline();
        // a fresh signal before the request: an event after this try's read wakes the next wait
        wake = new CompletableFuture<>();
        if (ownRevision == 0) {
            return first(deadline);
        }
        return check(deadline);
    }

    /**
     * The first try: create the own key (if absent, and if the lease's guard has not moved) and
     * look at the queue, in one transaction.
     */
    private AttemptResult<EtcdGrant> first(long deadline) {
        while (true) {
            EtcdLease l = backend.leases().lease(ttlSeconds, deadline, name);
            if (l != lease) {
                // creates sent on an earlier lease can never apply: it is gone
                uncertainKeys.clear();
            }
            lease = l;
            Leases.Refresh refresh = stale(lease) ? backend.leases().startRefresh(lease, name) : null;
            keyMaybeWritten = true;
            ByteSequence key = ownKey;
            ByteSequence guard = backend.keys().guard(l.id);
            long guardAt = l.guardRevision();
            Calls.Call<TxnResponse> call = backend.calls().start("acquire", name, () -> backend.kv().txn()
                    .If(EtcdOps.absent(key), EtcdOps.guardAt(guard, guardAt))
                    .Then(EtcdOps.putWithLease(key, request.ownerId(), l.id), EtcdOps.newestTwo(namePrefix))
                    .Else(EtcdOps.get(key), EtcdOps.get(guard))
                    .commit(), true);
            TxnResponse r;
            try {
                r = call.await(deadline);
            } catch (LeaseGoneException e) {
                // nothing was written, and nothing sent on this lease ever will be: it expired or was
                // revoked; take a new one and try again
                uncertainKeys.clear();
                backend.leases().gone(lease, "a put was answered: lease not found");
                if (deadline - System.nanoTime() > 0) {
                    continue;
                }
                throw e;
            } finally {
                if (call.outcomeUncertain() && !l.isGone() && !uncertainKeys.contains(key)) {
                    uncertainKeys.add(key);
                }
            }
            checkedAt = r.getHeader().getRevision();
            readAt = System.nanoTime();
            if (!r.isSucceeded()) {
                List<KeyValue> own = r.getGetResponses().get(0).getKvs();
                if (own.isEmpty()) {
                    List<KeyValue> g = r.getGetResponses().get(1).getKvs();
                    long now = g.isEmpty() ? 0 : g.get(0).getModRevision();
                    if (now == guardAt) {
                        throw new LockBackendException("etcd: acquire of lock '" + name + "': the key of this "
                                + "attempt vanished as it was created", name, null);
                    }
                    // another acquisition of this client on this lease ended while a create of it
                    // was in flight, and moved the guard: send the create again with the guard as it is
                    l.guardRead(guardAt, now);
                    settle(refresh, deadline);
                    if (deadline - System.nanoTime() > 0) {
                        continue;
                    }
                    throw new LockBackendException("etcd: acquire of lock '" + name + "' got no answer within "
                            + "the operation timeout: the guard of its etcd lease kept moving", name, null);
                }
                if (!own.get(0).getValue().equals(ownerValue)) {
                    // the key is not this acquisition's (its value is another owner id): never adopt
                    // it. Only the client's reusable key can be there without this client knowing;
                    // that key path is then left alone for good, and this attempt takes its own
                    if (!sharedPath) {
                        throw new LockBackendException("etcd: acquire of lock '" + name + "': the key of this "
                                + "attempt is held by another owner", name, null);
                    }
                    LOG.debug("dlock: the reusable key of lock '{}' is taken by another owner; using the "
                            + "acquisition's own key", name);
                    backend.poisonPath(name, this);
                    sharedPath = false;
                    ownKey = backend.keys().key(name, request.ownerId());
                    continue;
                }
                // an earlier send of this same transaction created the key and its answer was lost
                ownRevision = own.get(0).getCreateRevision();
                return check(deadline);
            }
            List<KeyValue> newest = r.getGetResponses().get(0).getKvs();
            if (newest.isEmpty() || !newest.get(0).getKey().equals(ownKey)) {
                throw new LockBackendException("etcd: acquire of lock '" + name + "': the new key is not the newest "
                        + "of its name (" + newest.size() + " keys read)", name, null);
            }
            ownRevision = newest.get(0).getCreateRevision();
            if (newest.size() > 1) {
                predecessor = newest.get(1).getKey();
                return AttemptResult.busy();
            }
            return grant(deadline, refresh);
        }
    }

    /** Any later try: is the own key still there, and is there a key before it? */
    private AttemptResult<EtcdGrant> check(long deadline) {
        if (quiet()) {
            return AttemptResult.busy();
        }
        // woken by the deletion of the predecessor, this try most likely finds the turn: a lease
        // refresh the grant would need is then sent along with the read rather than after it
        Leases.Refresh refresh = predecessorDeleted && lease != null && !lease.isGone() && stale(lease)
                ? backend.leases().startRefresh(lease, name) : null;
        predecessorDeleted = false;
        TxnResponse r;
        try {
            r = backend.calls().run("acquire", name, deadline, () -> backend.kv().txn()
                    .If(EtcdOps.createdAt(ownKey, ownRevision))
                    .Then(EtcdOps.predecessor(namePrefix, ownRevision))
                    .commit(), true);
        } catch (RuntimeException e) {
            settle(refresh, deadline);
            throw e;
        }
        checkedAt = r.getHeader().getRevision();
        readAt = System.nanoTime();
        if (!r.isSucceeded()) {
            settle(refresh, deadline);
            ownKeyDeleted = true;
            throw new LockBackendException("etcd: lock '" + name + "' was not acquired: this waiter's key was "
                    + "deleted while it waited in the queue (its etcd lease " + (lease == null ? "?" : lease.hexId())
                    + " expired or was revoked)", name, null);
        }
        List<KeyValue> before = r.getGetResponses().get(0).getKvs();
        if (!before.isEmpty() && !before.get(0).getKey().equals(ownKey)) {
            predecessor = before.get(0).getKey();
            settle(refresh, deadline);
            return AttemptResult.busy();
        }
        return grant(deadline, refresh);
    }

    /**
     * @return whether nothing can have changed this acquisition's turn since the last read: both
     *     watches are in place (the predecessor's is the current one), none of them has fired or
     *     failed, the lease lives, and the last read is recent
     */
    private boolean quiet() {
        return !predecessorDeleted && !ownKeyDeleted && !watchFailed && !watchPaused && ownWatch != null
                && predecessor != null && predecessor.equals(watchedPredecessor) && predecessorWatch != null
                && lease != null && !lease.isGone() && System.nanoTime() - readAt < VERIFY_NANOS;
    }

    /** Waits for a refresh that turned out not to be needed, so that it is recorded; never throws. */
    private void settle(Leases.Refresh refresh, long deadline) {
        if (refresh == null) {
            return;
        }
        try {
            refresh.await(deadline);
        } catch (RuntimeException e) {
            // a lease that is gone is reported by Leases; the next try finds it
            LOG.debug("dlock: a lease refresh while waiting for lock '{}' failed", name, e);
        }
    }

    /**
     * The key is the oldest of its name: the lock is ours once the lease is known to live a full
     * lease time from now, at most 5% less.
     */
    private AttemptResult<EtcdGrant> grant(long deadline, Leases.Refresh refresh) {
        if (refresh == null && stale(lease)) {
            refresh = backend.leases().startRefresh(lease, name);
        }
        if (refresh != null) {
            refresh.await(deadline);
        }
        if (lease.isGone()) {
            throw new LockBackendException("etcd: lock '" + name + "' was not acquired: its etcd lease "
                    + lease.hexId() + " expired or was revoked", name, null);
        }
        EtcdGrant grant = new EtcdGrant(name, request.ownerId(), ownKey, ownRevision, lease, sharedPath,
                uncertainKeys.isEmpty() ? null : uncertainKeys);
        lease.grants.add(grant);
        if (sharedPath) {
            backend.handPath(name, this, grant);
        }
        finished = true;
        closeWatches();
        backend.attemptEnded(this);
        return AttemptResult.granted(ownRevision, grant, lease.lastRefreshSent());
    }

    private boolean stale(EtcdLease l) {
        return backend.ticker().nanoTime() - l.lastRefreshSent() > staleNanos;
    }

    @Override
    public CompletionStage<Void> turn(Duration maxWait) {
        if (maxWait.isZero() || maxWait.isNegative()) {
            return CompletableFuture.completedFuture(null);
        }
        if (finished || ownRevision == 0 || ownKeyDeleted || backend.isClosed()
                || (lease != null && lease.isGone())) {
            // the next try reports it
            return CompletableFuture.completedFuture(null);
        }
        // this try's signal (each try makes a fresh one), completed by a watch event on jetcd's thread
        CompletableFuture<Void> signal = wake;
        try {
            watch();
        } catch (RuntimeException e) {
            // watching is an optimisation: without it the core's bounded poll still finds the turn
            LOG.debug("dlock: watching the queue of lock '{}' failed; polling instead", name, e);
        }
        return signal;
    }

    /** Makes sure the predecessor and the own key are watched for deletion, from just after the last read. */
    private void watch() {
        if (watchFailed) {
            // a watch that fails (no leader, compacted revision, permissions) is made again, but not at
            // once: until then the core's bounded poll finds the turn, without a storm of new watches
            watchFailed = false;
            closeWatches();
            watchPaused = true;
            watchAgainAt = System.nanoTime() + WATCH_RETRY_NANOS;
        }
        if (watchPaused) {
            if (System.nanoTime() - watchAgainAt < 0) {
                return;
            }
            watchPaused = false;
        }
        Watch watch = backend.watch();
        if (ownWatch == null) {
            ownWatch = watch.watch(ownKey, EtcdOps.deletesFrom(checkedAt + 1), Watch.listener(
                    response -> {
                        if (hasDelete(response)) {
                            ownKeyDeleted = true;
                            wake.complete(null);
                        }
                    },
                    error -> onWatchError(),
                    () -> { }));
        }
        if (predecessor != null && !predecessor.equals(watchedPredecessor)) {
            if (predecessorWatch != null) {
                predecessorWatch.close();
            }
            watchedPredecessor = predecessor;
            predecessorWatch = watch.watch(predecessor, EtcdOps.deletesFrom(checkedAt + 1), Watch.listener(
                    response -> {
                        if (hasDelete(response)) {
                            predecessorDeleted = true;
                            wake.complete(null);
                        }
                    },
                    error -> onWatchError(),
                    () -> { }));
        }
    }

    private void onWatchError() {
        watchFailed = true;
        wake.complete(null);
    }

    private static boolean hasDelete(WatchResponse response) {
        for (WatchEvent e : response.getEvents()) {
            if (e.getEventType() == WatchEvent.EventType.DELETE) {
                return true;
            }
        }
        return false;
    }

    private void closeWatches() {
        if (predecessorWatch != null) {
            closeQuietly(predecessorWatch);
            predecessorWatch = null;
            watchedPredecessor = null;
        }
        if (ownWatch != null) {
            closeQuietly(ownWatch);
            ownWatch = null;
        }
    }

    private void closeQuietly(Watch.Watcher w) {
        try {
            w.close();
        } catch (RuntimeException e) {
            LOG.debug("dlock: closing a watch of lock '{}' failed", name, e);
        }
    }

    /** Wakes a wait at once; the client is closing. */
    void wakeUp() {
        wake.complete(null);
    }

    /** A lease of this client is gone: if it is this attempt's, its key went with it. */
    void leaseGone(EtcdLease gone) {
        if (gone == lease) {
            wake.complete(null);
        }
    }

    @Override
    public void abandon() {
        if (finished) {
            return;
        }
        finished = true;
        backend.attemptEnded(this);
        try {
            closeWatches();
        } catch (RuntimeException e) {
            LOG.debug("dlock: closing the watches of lock '{}' failed", name, e);
        }
        if (!keyMaybeWritten || lease == null || lease.isGone()) {
            // nothing was sent, or the key went with its lease, as will any create sent on it
            if (sharedPath) {
                backend.freePath(name, this);
            }
            return;
        }
        if (!uncertainKeys.isEmpty()) {
            // a copy of the create may still arrive: delete what it made, and move the guard so that
            // nothing arriving later can make it again
            List<ByteSequence> keys = new ArrayList<>(uncertainKeys);
            if (!keys.contains(ownKey)) {
                keys.add(ownKey);
            }
            backend.endGuarded(name, ownKey, keys, request.ownerId(), lease, sharedPath ? this : null);
            return;
        }
        if (ownKeyDeleted) {
            if (sharedPath) {
                backend.freePath(name, this);
            }
            return;
        }
        backend.deleteKey(name, ownKey, ownRevision, request.ownerId(), lease, sharedPath ? this : null);
    }

    @Override
    public String toString() {
        return "EtcdAttempt{" + name + (ownRevision == 0 ? "" : ", revision " + ownRevision) + "}";
    }
}
