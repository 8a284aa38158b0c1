package io.dlock.etcd.internal;

import io.dlock.LockBackendException;
import io.dlock.spi.support.LeaseTimes;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.LostReason;
import io.dlock.Ticker;
import io.dlock.spi.BackendEvents;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's etcd leases: one per distinct TTL, granted on first use, kept alive by this class
 * every third of the TTL with single keep-alive requests (no long-lived keep-alive stream that
 * could end unnoticed), sent from a worker thread as calls (so a member that does not answer costs
 * a hedge delay, not the lease), and replaced when etcd says one is gone, after reporting the locks
 * that were attached to it as lost. Thread-safe.
 */
final class Leases {

    private static final Logger LOG = LoggerFactory.getLogger(Leases.class);

    private static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    private final Lease client;
    private final Calls calls;
    private final ScheduledExecutorService scheduler;
    private final Executor worker;
    private final Ticker ticker;
    private final BackendEvents events;
    private final long timeoutNanos;
    private final String server;
    private final Consumer<EtcdLease> onGone;
    private final ConcurrentHashMap<Long, EtcdLease> live = new ConcurrentHashMap<>();
    private final ReentrantLock grantLock = new ReentrantLock();
    private volatile boolean closed;

    Leases(Lease client, Calls calls, ScheduledExecutorService scheduler, Executor worker, Ticker ticker,
           BackendEvents events, Duration timeout, String server, Consumer<EtcdLease> onGone) {
        this.client = client;
        this.calls = calls;
        this.scheduler = scheduler;
        this.worker = worker;
        this.ticker = ticker;
        this.events = events;
        this.timeoutNanos = LeaseTimes.saturatedNanos(timeout);
        this.server = server;
        this.onGone = onGone;
    }

    /**
     * Returns the live lease for a TTL, granting one if there is none.
     *
     * @param ttlSeconds the TTL
     * @param deadline on {@link System#nanoTime()}
     * @param lockName for messages
     * @return the lease
     * @throws LockBackendException if a grant was needed and failed
     */
    EtcdLease lease(long ttlSeconds, long deadline, String lockName) {
        EtcdLease lease = live.get(ttlSeconds);
        if (lease != null && !lease.isGone()) {
            return lease;
        }
        boolean locked = false;
        try {
            locked = grantLock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            try {
                locked = grantLock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException again) {
                Thread.currentThread().interrupt();
            }
        }
        if (!locked) {
            throw new LockBackendException("etcd: granting a lease for lock '" + lockName + "' got no answer within "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms from " + server, lockName, null);
        }
        try {
            lease = live.get(ttlSeconds);
            if (lease != null && !lease.isGone()) {
                return lease;
            }
            ensureOpen(lockName);
            Calls.Call<LeaseGrantResponse> call = calls.start("lease grant", lockName, () -> client.grant(ttlSeconds), true);
            LeaseGrantResponse r = call.await(deadline);
            if (r.getTTL() < ttlSeconds) {
                // etcd raises a TTL to its minimum, never lowers it; a shorter lease would end before the holder knows
                revokeQuietly(r.getID());
                throw new LockConfigurationException(Kind.INCOMPATIBLE_SERVER, "etcd: " + server + " granted a lease of "
                        + r.getTTL() + " s where " + ttlSeconds + " s were asked: an etcd server never shortens a"
                        + " lease, so something between the client and the server is not etcd", lockName, null);
            }
            lease = new EtcdLease(r.getID(), ttlSeconds, call.sentAt());
            live.put(ttlSeconds, lease);
            LOG.debug("dlock: etcd lease {} granted, ttl {} s (etcd: {} s)", lease.hexId(), ttlSeconds, r.getTTL());
            scheduleKeepAlive(lease, intervalNanos(lease));
            return lease;
        } finally {
            grantLock.unlock();
        }
    }

    /**
     * Starts a keep-alive of a lease; {@link Refresh#await} waits for it and records it.
     *
     * @param lease the lease
     * @param lockName for messages
     * @return the refresh in flight
     */
    Refresh startRefresh(EtcdLease lease, String lockName) {
        return new Refresh(lease, calls.start("lease keep-alive", lockName, () -> client.keepAliveOnce(lease.id), true),
                lockName);
    }

    /** A keep-alive in flight. */
    final class Refresh {
        final EtcdLease lease;
        private final Calls.Call<LeaseKeepAliveResponse> call;
        private final String lockName;

        private Refresh(EtcdLease lease, Calls.Call<LeaseKeepAliveResponse> call, String lockName) {
            this.lease = lease;
            this.call = call;
            this.lockName = lockName;
        }

        /** @return the ticker reading taken before the keep-alive whose answer counts was sent */
        long sentAt() {
            return call.sentAt();
        }

        /**
         * Waits for the keep-alive; on success the lease's refresh time moves on.
         *
         * @param deadline on {@link System#nanoTime()}
         * @throws LeaseGoneException if the lease is gone (it is then reported and replaced)
         * @throws LockBackendException if the outcome is unknown
         */
        void await(long deadline) {
            LeaseKeepAliveResponse r;
            try {
                r = call.await(deadline);
            } catch (LeaseGoneException e) {
                gone(lease, "a keep-alive was answered: lease not found");
                throw e;
            }
            if (r.getTTL() <= 0) {
                gone(lease, "a keep-alive was answered with TTL " + r.getTTL());
                throw new LeaseGoneException("etcd: lease keep-alive" + (lockName == null ? "" : " of lock '" + lockName
                        + "'") + " failed: the etcd lease expired or was revoked", lockName, null);
            }
            lease.refreshed(call.sentAt());
        }
    }

    private long intervalNanos(EtcdLease lease) {
        return TimeUnit.SECONDS.toNanos(lease.ttlSeconds) / 3;
    }

    private void scheduleKeepAlive(EtcdLease lease, long delayNanos) {
        if (closed || lease.isGone()) {
            return;
        }
        try {
            ScheduledFuture<?> task = scheduler.schedule(() -> keepAlive(lease), Math.max(0, delayNanos),
                    TimeUnit.NANOSECONDS);
            lease.setKeeperTask(task);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    /**
     * The background keep-alive: the scheduler thread only hands it to a worker, which sends it as
     * any call (sent again to another member if one does not answer, see {@link Calls}).
     */
    private void keepAlive(EtcdLease lease) {
        if (closed || lease.isGone()) {
            return;
        }
        long interval = intervalNanos(lease);
        long age = ticker.nanoTime() - lease.lastRefreshSent();
        if (age < interval - interval / 10) {
            // a renewal or an acquire refreshed it meanwhile
            scheduleKeepAlive(lease, interval - age);
            return;
        }
        try {
            worker.execute(() -> keepAliveNow(lease, interval));
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    private void keepAliveNow(EtcdLease lease, long interval) {
        Refresh r = startRefresh(lease, null);
        try {
            r.await(calls.deadline());
            scheduleKeepAlive(lease, interval - (ticker.nanoTime() - r.sentAt()));
        } catch (LeaseGoneException e) {
            // reported by Refresh.await
        } catch (RuntimeException e) {
            if (!closed) {
                LOG.debug("dlock: keep-alive of etcd lease {} failed, retrying: {}", lease.hexId(),
                        calls.scrub(e.getMessage()));
            }
            scheduleKeepAlive(lease, Math.min(interval / 2, RETRY_NANOS));
        }
    }

    /** Like {@link #gone}, on the scheduler thread: for callbacks that must not run listeners themselves. */
    void goneLater(EtcdLease lease, String why) {
        goneAsync(lease, why);
    }

    private void goneAsync(EtcdLease lease, String why) {
        try {
            scheduler.execute(() -> gone(lease, why));
        } catch (RejectedExecutionException e) {
            gone(lease, why);
        }
    }

    /**
     * etcd said the lease is gone: stop using it, report the locks on it as lost, wake the
     * acquisitions queued with it (their keys went with it). Idempotent.
     */
    void gone(EtcdLease lease, String why) {
        if (!lease.markGone()) {
            return;
        }
        live.remove(lease.ttlSeconds, lease);
        if (closed) {
            return;
        }
        onGone.accept(lease);
        List<EtcdGrant> lost = new ArrayList<>(lease.grants);
        lease.grants.clear();
        LOG.warn("dlock: etcd lease {} (ttl {} s) at {} expired or was revoked ({}); {} held lock(s) on it are lost",
                lease.hexId(), lease.ttlSeconds, server, why, lost.size());
        // each grant by its owner id, including one the core has not seen yet (it keeps the loss for it)
        for (EtcdGrant g : lost) {
            events.leaseLost(g.ownerId, LostReason.SESSION_LOST);
        }
    }

    private void ensureOpen(String lockName) {
        if (closed) {
            throw new LockBackendException("etcd: the lock client is closed", lockName, null);
        }
    }

    private void revokeQuietly(long id) {
        try {
            client.revoke(id);
        } catch (RuntimeException e) {
            LOG.debug("dlock: revoking etcd lease {} failed", Long.toHexString(id), e);
        }
    }

    /**
     * Stops the keep-alives and revokes every lease, which deletes every key this client still
     * has; waits at most until the deadline.
     */
    void close(long deadline) {
        closed = true;
        List<CompletableFuture<?>> revokes = new ArrayList<>();
        for (EtcdLease lease : live.values()) {
            lease.markGone();
            try {
                revokes.add(client.revoke(lease.id));
            } catch (RuntimeException e) {
                LOG.debug("dlock: revoking etcd lease {} failed", lease.hexId(), e);
            }
        }
        live.clear();
        for (CompletableFuture<?> f : revokes) {
            try {
                f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                LOG.debug("dlock: revoking an etcd lease on close failed; its keys end with its TTL: {}",
                        calls.scrub(Calls.describe(e)));
            }
        }
    }

    /** @return the live leases, for tests */
    List<EtcdLease> live() {
        return new ArrayList<>(live.values());
    }
}
