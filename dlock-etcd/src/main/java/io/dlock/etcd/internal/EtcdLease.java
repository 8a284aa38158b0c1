package io.dlock.etcd.internal;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One etcd lease of this client: every key of every acquisition with the same TTL is attached to
 * it. A key attached to a lease lives until the lease expires, which is one TTL after its last
 * refresh (grant or keep-alive), whatever the key's own age: so the lease remembers when the
 * latest refresh that etcd confirmed was sent. Thread-safe.
 */
final class EtcdLease {

    final long id;
    final long ttlSeconds;
    /** The grants (held locks) whose keys are attached to this lease. */
    final Set<EtcdGrant> grants = ConcurrentHashMap.newKeySet();

    private final AtomicLong lastRefreshSent;
    private final AtomicLong guardRevision = new AtomicLong();
    private final CompletableFuture<Void> gone = new CompletableFuture<>();
    private ScheduledFuture<?> keeperTask; // guarded by this

    EtcdLease(long id, long ttlSeconds, long grantSentAt) {
        this.id = id;
        this.ttlSeconds = ttlSeconds;
        this.lastRefreshSent = new AtomicLong(grantSentAt);
    }

    /**
     * @return the ticker reading taken before the latest grant or keep-alive of this lease that
     *     etcd confirmed; the lease lasts at least one TTL from then (unless revoked)
     */
    long lastRefreshSent() {
        return lastRefreshSent.get();
    }

    /** A grant or keep-alive sent at {@code sentAt} was confirmed by etcd. */
    void refreshed(long sentAt) {
        lastRefreshSent.accumulateAndGet(sentAt, (current, sent) -> sent - current > 0 ? sent : current);
    }

    /**
     * The revision at which this lease's guard key was last written, as far as this client knows
     * (0: never). Every create of an acquisition on this lease is sent with the condition that
     * the guard is still at this revision; an acquisition that ends while a create of it may still
     * be in flight (sent more than once, or unanswered) writes the guard, in the same transaction
     * that deletes whatever key that create made. A copy of the create that arrives later (held in
     * a network, or by a member cut off from its peers) then finds the guard moved and does
     * nothing: a key of an acquisition that is over can never appear, on a lease the client keeps
     * alive. Other creates in flight on the lease fail their condition once and are sent again.
     *
     * @return the revision
     */
    long guardRevision() {
        return guardRevision.get();
    }

    /** The guard was written at {@code revision} (it only moves forward). */
    void guardMoved(long revision) {
        guardRevision.accumulateAndGet(revision, Math::max);
    }

    /**
     * A create sent with the guard at {@code sent} found it at {@code read}: learn where it is. It
     * is lower only if someone deleted the key by hand; then follow it down, unless another thread
     * learnt something newer meanwhile.
     */
    void guardRead(long sent, long read) {
        if (read > sent) {
            guardMoved(read);
        } else {
            guardRevision.compareAndSet(sent, read);
        }
    }

    /** @return whether etcd said the lease is gone (expired or revoked) */
    boolean isGone() {
        return gone.isDone();
    }

    /** @return true the first time: the lease is now known to be gone */
    boolean markGone() {
        boolean first = gone.complete(null);
        if (first) {
            setKeeperTask(null);
        }
        return first;
    }

    /** @return completes when the lease is known to be gone */
    CompletableFuture<Void> goneSignal() {
        return gone;
    }

    /** Replaces the pending keep-alive task, cancelling the previous one. */
    synchronized void setKeeperTask(ScheduledFuture<?> task) {
        if (keeperTask != null && keeperTask != task) {
            keeperTask.cancel(false);
        }
        keeperTask = task;
        if (task != null && gone.isDone()) {
            task.cancel(false);
        }
    }

    /** @return the id as etcdctl shows it */
    String hexId() {
        return Long.toHexString(id);
    }

    @Override
    public String toString() {
        return "EtcdLease{" + hexId() + ", ttl " + ttlSeconds + " s" + (isGone() ? ", gone" : "") + "}";
    }
}
