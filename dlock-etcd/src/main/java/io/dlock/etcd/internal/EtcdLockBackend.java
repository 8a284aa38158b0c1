package io.dlock.etcd.internal;

import io.dlock.spi.support.LeaseTimes;
import io.dlock.Capability;
import io.dlock.LockBackendException;
import io.dlock.LockHolder;
import io.dlock.Ticker;
import io.dlock.spi.support.Deadline;
import io.dlock.spi.support.Ids;
import io.dlock.spi.support.RetryingCleaner;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.BackendContext;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.RenewOutcome;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Op;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The etcd {@link LockBackend}, on jetcd. Public only so that {@code io.dlock.etcd.EtcdLockProvider}
 * can open it; not an API.
 *
 * <p>Every call ends within about the operation timeout. Thread-safe.
 */
public final class EtcdLockBackend implements LockBackend<EtcdGrant> {

    private static final Logger LOG = LoggerFactory.getLogger(EtcdLockBackend.class);

    private static final Set<Capability> CAPABILITIES = Collections.unmodifiableSet(EnumSet.of(Capability.FENCING,
            Capability.NOTIFY_WAITERS, Capability.FAIR, Capability.HOLDER_QUERY, Capability.SURVIVES_SERVER_FAILOVER));

    /** The most keys one renewal check reads in one transaction (etcd allows 128 operations by default). */
    static final int CHECK_BATCH = 64;

    /**
     * The most deletes waiting to be retried. Generous: a key whose delete is dropped stays for as
     * long as the client keeps its etcd lease alive, blocking its lock; each entry is small.
     */
    static final int MAX_PENDING_DELETES = 65_536;
    /** Threads for jetcd's callbacks, whatever the number of locks and waiters. */
    static final int CALLBACK_THREADS = 4;
    /**
     * Threads for background keep-alives, each waiting for one etcd lease's answer. A client has
     * one etcd lease per lease time it uses, so a few threads serve it; more wait in the queue.
     */
    static final int KEEP_ALIVE_THREADS = 2;

    private final EtcdSettings settings;
    private final BackendContext context;
    private final Keys keys;
    private final Client client;
    private final KV kv;
    private final ExecutorService jetcdExecutor;
    private final ExecutorService keepAliveExecutor;
    private final ScheduledThreadPoolExecutor scheduler;
    private final Calls calls;
    private final Leases leases;
    private final Set<EtcdAttempt> attempts = ConcurrentHashMap.newKeySet();
    private final RetryingCleaner cleaner;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The last part of this client's reusable key of every name: {@code c} and 128 random bits in hex. */
    private final String pathId;
    /**
     * Per lock name, what uses this client's reusable key of the name: the attempt, then its grant,
     * then a delete that has not been confirmed yet; {@link #POISONED} if a key this client did not
     * write was found there. A name is absent while the key is known not to exist.
     */
    private final ConcurrentHashMap<String, Object> paths = new ConcurrentHashMap<>();
    private volatile Watch watch;

    private static final Object POISONED = new Object();

    private EtcdLockBackend(BackendContext context, EtcdSettings settings, TrustManagerFactory trust) {
        this.context = context;
        this.settings = settings;
        this.keys = new Keys(settings.prefix);
        this.pathId = "c" + Ids.randomHex(16);
        SslContext ssl = settings.tls ? sslContext(settings, trust) : null;
        this.scheduler = new ScheduledThreadPoolExecutor(1, context.threadFactory());
        this.scheduler.setRemoveOnCancelPolicy(true);
        // jetcd runs its callbacks here (answers, keep-alive responses, watch events), and ours only complete
        // futures: a few threads serve any number of locks and waiters
        ThreadPoolExecutor callbacks = new ThreadPoolExecutor(CALLBACK_THREADS, CALLBACK_THREADS, 10, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), context.threadFactory());
        callbacks.allowCoreThreadTimeOut(true);
        this.jetcdExecutor = callbacks;
        // a background keep-alive waits for its answer, which comes through jetcd's callbacks: the waits get
        // threads of their own, or a few of them would hold every callback thread and time out together
        ThreadPoolExecutor waits = new ThreadPoolExecutor(KEEP_ALIVE_THREADS, KEEP_ALIVE_THREADS, 10, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), context.threadFactory());
        waits.allowCoreThreadTimeOut(true);
        this.keepAliveExecutor = waits;
        Client built = null;
        try {
            ClientBuilder b = Client.builder()
                    .target(settings.target())
                    .executorService(jetcdExecutor)
                    .connectTimeout(Duration.ofMillis(Math.max(1, Math.min(Integer.MAX_VALUE,
                            TimeUnit.NANOSECONDS.toMillis(LeaseTimes.saturatedNanos(context.operationTimeout()))))))
                    // this backend retries idempotent requests itself, within each call's deadline; a
                    // request fails fast while no server is reachable, so that the last failure says why
                    .retryMaxAttempts(0)
                    .waitForReady(false)
                    // a member without a leader (cut off from its peers, or electing) refuses at once
                    // rather than hold a request it cannot serve; Calls sends it to another member
                    .header("hasleader", "true");
            if (settings.user != null) {
                b.user(ByteSequence.from(settings.user, StandardCharsets.UTF_8))
                        .password(ByteSequence.from(settings.password, StandardCharsets.UTF_8));
            }
            if (ssl != null) {
                b.sslContext(ssl);
            }
            built = b.build();
            this.kv = built.getKVClient(); // makes the channel; no I/O yet
        } catch (RuntimeException e) {
            if (built != null) {
                built.close();
            }
            scheduler.shutdownNow();
            jetcdExecutor.shutdownNow();
            keepAliveExecutor.shutdownNow();
            throw new IllegalArgumentException("uri: jetcd cannot use '" + settings + "': " + e.getMessage(), e);
        }
        this.client = built;
        this.calls = new Calls(settings, context.ticker(), context.operationTimeout(), closed::get);
        this.cleaner = RetryingCleaner.start("etcd", context.threadFactory(),
                RetryingCleaner.Settings.defaults().withMaxPending(MAX_PENDING_DELETES));
        this.leases = new Leases(client.getLeaseClient(), calls, scheduler, keepAliveExecutor, context.ticker(),
                context.events(), context.operationTimeout(), settings.server(), this::leaseGone);
    }

    /**
     * Opens a backend for one client; no I/O.
     *
     * @param context the client's URI, timeouts, clocks, thread factory and event sink
     * @param trust the trust for {@code etcds://} connections, or null for the {@code caFile} URI
     *     parameter or else the JVM's default
     * @return the backend
     * @throws IllegalArgumentException if the URI is not valid for etcd, naming the part
     */
    public static EtcdLockBackend open(BackendContext context, TrustManagerFactory trust) {
        return new EtcdLockBackend(context, EtcdSettings.from(context.uri()), trust);
    }

    private static SslContext sslContext(EtcdSettings settings, TrustManagerFactory trust) {
        try {
            SslContextBuilder b = GrpcSslContexts.forClient();
            if (trust != null) {
                b.trustManager(trust);
            } else if (settings.caFile != null) {
                b.trustManager(settings.caFile.toFile());
            }
            if (settings.certFile != null) {
                b.keyManager(settings.certFile.toFile(), settings.keyFile.toFile());
            }
            return b.build();
        } catch (SSLException | RuntimeException e) {
            throw new IllegalArgumentException("uri: the TLS settings of '" + settings + "' are not usable (caFile, "
                    + "certFile, keyFile must be PEM files, the key in PKCS#8): " + e.getMessage(), e);
        }
    }

    // ---- for the attempts ----

    Keys keys() {
        return keys;
    }

    Calls calls() {
        return calls;
    }

    Leases leases() {
        return leases;
    }

    KV kv() {
        return kv;
    }

    Ticker ticker() {
        return context.ticker();
    }

    Watch watch() {
        Watch w = watch;
        if (w == null) {
            synchronized (this) {
                if (watch == null) {
                    ensureOpen(null);
                    watch = client.getWatchClient();
                }
                w = watch;
            }
        }
        return w;
    }

    /** @return the last part of this client's reusable key of every name */
    String pathId() {
        return pathId;
    }

    /**
     * Claims this client's reusable key of a name for an attempt.
     *
     * @return true if the attempt may use it: no other acquisition of this client uses it, and no
     *     key is known to be left there
     */
    boolean claimPath(String name, Object user) {
        return !closed.get() && paths.putIfAbsent(name, user) == null;
    }

    /** Passes the reusable key of a name on, from an attempt to its grant, or to a pending delete. */
    void handPath(String name, Object from, Object to) {
        paths.replace(name, from, to);
    }

    /** The reusable key of a name is known not to exist any more: the next acquisition may use it. */
    void freePath(String name, Object user) {
        paths.remove(name, user);
    }

    /** A key that this client did not write holds the reusable key path of a name: never use it again. */
    void poisonPath(String name, Object user) {
        paths.replace(name, user, POISONED);
    }

    /** @return how many names' reusable keys are in use, for tests */
    int pathsInUse() {
        return paths.size();
    }

    boolean isClosed() {
        return closed.get();
    }

    void ensureOpen(String lockName) {
        if (closed.get()) {
            throw new LockBackendException("etcd: the lock client is closed", lockName, null);
        }
    }

    void attemptEnded(EtcdAttempt attempt) {
        attempts.remove(attempt);
    }

    private void leaseGone(EtcdLease lease) {
        for (EtcdGrant g : lease.grants) {
            if (g.sharedPath) {
                freePath(g.name, g); // the key went with the lease
            }
        }
        for (EtcdAttempt a : attempts) {
            a.leaseGone(lease);
        }
    }

    /**
     * Deletes the key of an acquisition that gave up, only if it is still the key created at
     * {@code revision} (or, with revision 0, whatever is at this owner's key). Tries once, briefly;
     * if that fails, keeps trying in the background until it succeeds or the key's lease is gone.
     * Never throws.
     */
    void deleteKey(String name, ByteSequence key, long revision, String ownerId, EtcdLease lease, Object pathUser) {
        end(new PendingDelete(name, key, revision, ownerId, lease, pathUser != null, null), pathUser);
    }

    /**
     * Ends an acquisition a copy of whose create may still arrive: in one transaction, deletes each
     * of {@code keys} that holds this owner id and moves the guard of the lease (see
     * {@link EtcdLease#guardRevision()}), so that no copy arriving later can make a key again. Tries
     * once, briefly; if that fails, keeps trying in the background until it succeeds or the lease
     * is gone. Never throws.
     */
    void endGuarded(String name, ByteSequence key, List<ByteSequence> keys, String ownerId, EtcdLease lease,
                    Object pathUser) {
        end(new PendingDelete(name, key, 0, ownerId, lease, pathUser != null, keys), pathUser);
    }

    private void end(PendingDelete p, Object pathUser) {
        String name = p.name;
        // undoing is a courtesy the caller should not wait long for
        long deadline = Deadline.after(LeaseTimes.abandonBudget(context.operationTimeout(), Duration.ofMillis(50)))
                .nanoTime();
        try {
            p.done(calls.run("abandon", name, deadline, p::send, true));
            if (pathUser != null) {
                freePath(name, pathUser);
            }
        } catch (LeaseGoneException e) {
            // the keys went with the lease, and nothing sent on it can apply any more
            leases.gone(p.lease, "a guarded delete was answered: lease not found");
            if (pathUser != null) {
                freePath(name, pathUser);
            }
        } catch (RuntimeException e) {
            LOG.debug("dlock: deleting the key of an abandoned attempt at lock '{}' failed; retrying in the background",
                    name, e);
            deleteLater(p, pathUser);
        }
    }

    /**
     * Retries a delete in the background (the support kit's {@link RetryingCleaner}, backoff from
     * 50 ms to 1 s), until it succeeds or the key's lease is gone.
     *
     * @param pathUser what used the client's reusable key that is to be deleted, or null for
     *     another key; the pending delete takes it over until the key is gone
     */
    private void deleteLater(PendingDelete p, Object pathUser) {
        if (pathUser != null) {
            handPath(p.name, pathUser, p);
        }
        if (closed.get()) {
            return;
        }
        // the key goes at the latest with its lease, which this client keeps alive: no expiry to wait for
        cleaner.submit(p, () -> retryDelete(p), ChronoUnit.FOREVER.getDuration());
    }

    /** A pending delete is over: its key is gone. */
    private void deleted(PendingDelete p) {
        if (p.sharedPath) {
            freePath(p.name, p);
        }
    }

    /** One background try of a delete; a failure is thrown, and the cleaner tries again. */
    private RetryingCleaner.Outcome retryDelete(PendingDelete p) {
        if (closed.get()) {
            return RetryingCleaner.Outcome.DONE; // closing revokes the leases, and every key with them
        }
        if (p.lease != null && p.lease.isGone()) {
            deleted(p); // the key went with its lease
            return RetryingCleaner.Outcome.DONE;
        }
        try {
            p.done(calls.run("clean-up", p.name, calls.deadline(), p::send, true));
        } catch (LeaseGoneException e) {
            deleted(p); // the key went with its lease
            leases.goneLater(p.lease, "a guarded delete was answered: lease not found");
            return RetryingCleaner.Outcome.DONE;
        }
        deleted(p);
        if (p.lease != null) {
            p.lease.grants.removeIf(g -> g.key.equals(p.key));
        }
        LOG.debug("dlock: deleted the key of lock '{}' in the background", p.name);
        return RetryingCleaner.Outcome.DONE;
    }

    /**
     * A delete to retry: owner-checked by the key's create revision when it is known, else by its
     * value (the acquisition's fresh owner id); or, when a copy of the acquisition's create may
     * still arrive, the guarded end: value-checked deletes of every key the create may have made,
     * and a write of the lease's guard, in one transaction.
     */
    private final class PendingDelete {
        final String name;
        final ByteSequence key;
        final long revision;
        final String ownerId;
        final EtcdLease lease;
        final boolean sharedPath;
        /** The keys of a guarded end, or null. */
        final List<ByteSequence> guardedKeys;

        PendingDelete(String name, ByteSequence key, long revision, String ownerId, EtcdLease lease,
                      boolean sharedPath, List<ByteSequence> guardedKeys) {
            this.name = name;
            this.key = key;
            this.revision = revision;
            this.ownerId = ownerId;
            this.lease = lease;
            this.sharedPath = sharedPath;
            this.guardedKeys = guardedKeys == null ? null : List.copyOf(guardedKeys);
        }

        CompletableFuture<TxnResponse> send() {
            if (guardedKeys != null) {
                Op[] ops = new Op[guardedKeys.size() + 1];
                for (int i = 0; i < guardedKeys.size(); i++) {
                    ops[i] = EtcdOps.deleteIfHolds(guardedKeys.get(i), ownerId);
                }
                ops[ops.length - 1] = EtcdOps.moveGuard(keys.guard(lease.id), lease.id);
                return kv.txn().Then(ops).commit();
            }
            if (revision == 0) {
                // the attempt's answer was lost before it learnt the revision: whatever is at the key
                // and holds this acquisition's owner id is its own
                return kv.txn().If(EtcdOps.holds(key, ownerId)).Then(EtcdOps.delete(key)).commit();
            }
            return kv.txn().If(EtcdOps.createdAt(key, revision)).Then(EtcdOps.delete(key)).commit();
        }

        /** The transaction applied: a guarded end moved the guard to its revision. */
        void done(TxnResponse r) {
            if (guardedKeys != null) {
                lease.guardMoved(r.getHeader().getRevision());
            }
        }

        @Override
        public String toString() {
            return "the delete of the key of lock '" + name + "'" + (guardedKeys == null ? "" : " (guarded)");
        }

        /** @return whether the transaction deleted {@link #key} */
        boolean deletedKey(TxnResponse r) {
            if (guardedKeys == null) {
                return r.isSucceeded();
            }
            return r.getTxnResponses().get(guardedKeys.indexOf(key)).isSucceeded();
        }
    }

    // ---- LockBackend ----

    /** @return {@code FENCING}, {@code NOTIFY_WAITERS}, {@code FAIR}, {@code HOLDER_QUERY}, {@code SURVIVES_SERVER_FAILOVER} */
    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    /** @return 2 s: etcd leases have whole-second TTLs and a server minimum of about 2 s */
    @Override
    public Duration minimumLeaseTime() {
        return Duration.ofSeconds(2);
    }

    /**
     * Starts one acquisition; no I/O. Its key is created on the first try, attached to this
     * client's etcd lease for the request's TTL.
     *
     * @param request the lock name, the fresh owner id and the lease time
     * @return the attempt
     */
    @Override
    public AcquireAttempt<EtcdGrant> newAttempt(AcquireRequest request) {
        EtcdAttempt attempt = new EtcdAttempt(this, request);
        attempts.add(attempt);
        if (closed.get()) {
            attempts.remove(attempt);
        }
        return attempt;
    }

    /** The backend's state of a grant; a grant without one was not made by an etcd backend. */
    private static EtcdGrant grantOf(Grant<EtcdGrant> lock) {
        EtcdGrant g = lock.state();
        if (g == null) {
            throw new IllegalArgumentException("lock '" + lock.name() + "' was not granted by this etcd backend");
        }
        return g;
    }

    /**
     * Renews held locks: one keep-alive per distinct etcd lease in the batch (so the cost does not
     * grow with the number of locks), and, in parallel, one read of the locks' keys per
     * {@value #CHECK_BATCH} locks to find those that are gone. A lock is renewed when its lease
     * answered the keep-alive and its key still exists with its create revision; not held when its
     * key is gone or changed, or its etcd lease is gone. A keep-alive or a read that fails makes
     * only the locks it covers unknown.
     */
    @Override
    public List<RenewOutcome> renew(List<Grant<EtcdGrant>> locks) {
        ensureOpen(null);
        long deadline = calls.deadline();
        int n = locks.size();
        EtcdGrant[] grants = new EtcdGrant[n];
        Map<EtcdLease, Leases.Refresh> refreshes = new IdentityHashMap<>();
        for (int i = 0; i < n; i++) {
            grants[i] = grantOf(locks.get(i));
            EtcdLease lease = grants[i].lease;
            if (!lease.isGone() && !refreshes.containsKey(lease)) {
                refreshes.put(lease, leases.startRefresh(lease, n == 1 ? grants[i].name : null));
            }
        }
        List<Calls.Call<TxnResponse>> checks = new ArrayList<>();
        for (int from = 0; from < n; from += CHECK_BATCH) {
            int to = Math.min(n, from + CHECK_BATCH);
            Op[] ops = new Op[to - from];
            for (int i = from; i < to; i++) {
                ops[i - from] = EtcdOps.revisions(grants[i].key);
            }
            checks.add(calls.start("renewal", n == 1 ? grants[0].name : null, () -> kv.txn().Then(ops).commit(), true));
        }
        Map<EtcdLease, LockBackendException> refreshFailed = new IdentityHashMap<>();
        for (Map.Entry<EtcdLease, Leases.Refresh> r : refreshes.entrySet()) {
            try {
                r.getValue().await(deadline);
            } catch (LeaseGoneException e) {
                // reported by Leases; its locks are not held below
            } catch (LockBackendException e) {
                refreshFailed.put(r.getKey(), e);
            }
        }
        RenewOutcome[] out = new RenewOutcome[n];
        for (int c = 0; c < checks.size(); c++) {
            TxnResponse r;
            try {
                r = checks.get(c).await(deadline);
            } catch (LockBackendException e) {
                for (int i = c * CHECK_BATCH; i < Math.min(n, (c + 1) * CHECK_BATCH); i++) {
                    out[i] = RenewOutcome.unknown(e);
                }
                continue;
            }
            List<GetResponse> reads = r.getGetResponses();
            for (int j = 0; j < reads.size(); j++) {
                int i = c * CHECK_BATCH + j;
                List<KeyValue> kvs = reads.get(j).getKvs();
                boolean held = !kvs.isEmpty() && kvs.get(0).getCreateRevision() == grants[i].revision;
                out[i] = held ? RenewOutcome.renewed() : RenewOutcome.notHeld();
                if (kvs.isEmpty() && grants[i].sharedPath) {
                    freePath(grants[i].name, grants[i]); // the key is gone: the core will not release it
                }
            }
        }
        for (int i = 0; i < n; i++) {
            if (grants[i].lease.isGone()) {
                out[i] = RenewOutcome.notHeld();
                if (grants[i].sharedPath) {
                    freePath(grants[i].name, grants[i]);
                }
            } else if (out[i] instanceof RenewOutcome.Renewed && refreshFailed.containsKey(grants[i].lease)) {
                out[i] = RenewOutcome.unknown(refreshFailed.get(grants[i].lease)); // the key is there; its lease?
            } else if (out[i] == null) {
                out[i] = RenewOutcome.unknown(new LockBackendException("etcd: the renewal check of lock '"
                        + grants[i].name + "' got no answer", grants[i].name, null));
            }
            if (out[i] instanceof RenewOutcome.NotHeld) {
                grants[i].lease.grants.remove(grants[i]);
            }
        }
        return List.of(out);
    }

    /**
     * Deletes the lock's key if it is still the one created at the grant's revision: a late or
     * repeated release finds a different revision (or no key) and does nothing. A release that
     * fails is retried in the background, so that the key does not outlive the release while the
     * client keeps its lease alive.
     */
    @Override
    public ReleaseOutcome release(Grant<EtcdGrant> lock) {
        EtcdGrant g = grantOf(lock);
        ensureOpen(g.name);
        List<ByteSequence> guarded = null;
        if (g.uncertainKeys != null) {
            // a copy of the grant's create may still arrive: end it guarded (see endGuarded)
            guarded = new ArrayList<>(g.uncertainKeys);
            if (!guarded.contains(g.key)) {
                guarded.add(g.key);
            }
        }
        PendingDelete p = new PendingDelete(g.name, g.key, g.revision, lock.ownerId(), g.lease, g.sharedPath, guarded);
        TxnResponse r;
        try {
            r = calls.run("release", g.name, calls.deadline(), p::send, true);
            p.done(r);
        } catch (LeaseGoneException e) {
            // only a guarded end writes with the lease: it is gone, and the key with it
            leases.gone(g.lease, "a release was answered: lease not found");
            g.lease.grants.remove(g);
            if (g.sharedPath) {
                freePath(g.name, g);
            }
            return ReleaseOutcome.NOT_HELD;
        } catch (LockBackendException e) {
            if (!g.lease.isGone()) {
                deleteLater(p, g.sharedPath ? g : null);
            } else if (g.sharedPath) {
                freePath(g.name, g); // the key went with its lease
            }
            throw e;
        }
        g.lease.grants.remove(g);
        if (g.sharedPath) {
            // deleted now, or found gone (a repeated release, or the key ended with its lease)
            freePath(g.name, g);
        }
        return p.deletedKey(r) ? ReleaseOutcome.RELEASED : ReleaseOutcome.NOT_HELD;
    }

    /** @return the owner and token of the oldest key of the name, which holds the lock */
    @Override
    public Optional<LockHolder> holder(String name) {
        ensureOpen(name);
        // a read-only transaction rather than kv.get: jetcd logs every failed get at WARN level
        TxnResponse t = calls.run("holder query", name, calls.deadline(),
                () -> kv.txn().Then(EtcdOps.oldest(keys.namePrefix(name))).commit(), true);
        GetResponse r = t.getGetResponses().get(0);
        if (r.getKvs().isEmpty()) {
            return Optional.empty();
        }
        KeyValue kv0 = r.getKvs().get(0);
        return Optional.of(new LockHolder(name, kv0.getValue().toString(StandardCharsets.UTF_8),
                kv0.getCreateRevision(), null));
    }

    /**
     * Wakes waiting attempts, stops the keep-alives, revokes the client's leases (deleting every
     * key it still has) and closes jetcd. Never throws.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (EtcdAttempt a : attempts) {
            a.wakeUp();
        }
        paths.clear();
        try {
            leases.close(calls.deadline());
        } catch (RuntimeException e) {
            LOG.debug("dlock: revoking etcd leases on close failed", e);
        }
        scheduler.shutdownNow();
        try {
            client.close();
        } catch (RuntimeException e) {
            LOG.debug("dlock: closing the jetcd client failed", e);
        }
        cleaner.close(); // after jetcd: a background try waiting for an answer ends with the client
        jetcdExecutor.shutdownNow();
        keepAliveExecutor.shutdownNow();
        try {
            long wait = Math.min(TimeUnit.SECONDS.toNanos(2), LeaseTimes.saturatedNanos(context.operationTimeout()));
            if (!scheduler.awaitTermination(wait, TimeUnit.NANOSECONDS)
                    || !jetcdExecutor.awaitTermination(wait, TimeUnit.NANOSECONDS)
                    || !keepAliveExecutor.awaitTermination(wait, TimeUnit.NANOSECONDS)) {
                LOG.debug("dlock: etcd backend threads still running after close");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "EtcdLockBackend{" + settings + "}";
    }

    /** @return the scheduler, for tests */
    ScheduledExecutorService scheduler() {
        return scheduler;
    }
}
