package io.dlock.zookeeper.internal;

import io.dlock.Capability;
import io.dlock.LockBackendException;
import io.dlock.LockHolder;
import io.dlock.LostReason;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.BackendContext;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.RenewOutcome;
import io.dlock.spi.support.AddressProbe;
import io.dlock.spi.support.Deadline;
import io.dlock.spi.support.LeaseTimes;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.CuratorEventType;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ZooKeeper {@link LockBackend}: one Curator client, hence one ZooKeeper session, per dlock
 * client. A lock is a queue of ephemeral sequential nodes
 * {@code [/chroot]/<prefix>/<encoded name>/lock-<owner id>-<sequence>} under a container parent;
 * the lowest node holds the lock, each waiter watches only its predecessor, and the fencing token
 * is the winning node's creation zxid.
 *
 * <p><b>The lease is the session.</b> The negotiated session timeout is the longest lease time
 * ({@link #maximumLeaseTime()}). When the connection is suspended or the session lost, every lease
 * of this client is reported lost at once, and for good: a lease reported lost is never valid
 * again, even if the connection comes back within the session. Its node, which would survive such
 * a reconnection, is deleted as soon as the connection is back, so the lock passes to the next
 * waiter rather than staying with a holder that was told it lost it.
 *
 * <p>Validity: a grant or renewal counts from the moment its request was sent, and every grant
 * or renewal got an answer from the server in this session, which the server keeps alive at least
 * a session timeout after that; leases are at most a session timeout long, so a holder's validity
 * ends before the server could expire the session and hand the lock on. A renewal is one
 * {@code sync} per call, whatever the number of locks (see {@link #renew}), which the leader
 * answers, so a follower cut off from the leader cannot vouch for a session the leader may be
 * expiring. Deployments should keep {@code syncLimit × tickTime} below
 * the session timeout, so that such a follower drops its clients (suspending their leases) before
 * the leader can expire them.
 *
 * <p>Thread-safe. Every call returns or throws {@link LockBackendException} within the operation
 * timeout: operations run in Curator's background mode and are waited for with our own deadline.
 */
public final class ZkBackend implements LockBackend<ZkGrant> {

    private static final Logger LOG = LoggerFactory.getLogger(ZkBackend.class);
    /** How long the core has to tell a holder its lease was lost before the clean-up deletes the node. */
    private static final long LOST_NODE_GRACE_MILLIS = 1000;
    /** The longest the probe of the addresses may take (see {@link AddressProbe}). */
    private static final Duration PROBE_BUDGET = Duration.ofMillis(250);
    /**
     * How long open waits for a session before it probes the addresses: a reachable server on a
     * usual network gives one sooner, and where nothing listens the open fails after this.
     */
    private static final Duration FIRST_LOOK = Duration.ofMillis(100);
    private static final Set<Capability> CAPABILITIES = Collections.unmodifiableSet(EnumSet.of(
            Capability.FENCING, Capability.NOTIFY_WAITERS, Capability.FAIR, Capability.HOLDER_QUERY,
            Capability.SURVIVES_SERVER_FAILOVER));

    final ZkConfig config;
    final BackendContext context;
    final CuratorFramework cf;
    final Calls calls;
    final LeftoverNodes leftovers;
    private final ExecutorService runSafe;
    private final Object stateLock = new Object();
    private long epoch; // guarded by stateLock; bumped on every suspension or loss of the session
    private final Map<String, ZkGrant> granted = new HashMap<>(); // guarded by stateLock; path -> grant
    private final Set<ZkAttempt> attempts = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile int sessionTimeoutMs;
    private volatile long suspendedSince; // System.nanoTime() of the suspension, 0 while connected

    private ZkBackend(ZkConfig config, BackendContext context, CuratorFramework cf, Calls calls,
                      ExecutorService runSafe) {
        this.config = config;
        this.context = context;
        this.cf = cf;
        this.calls = calls;
        this.runSafe = runSafe;
        this.sessionTimeoutMs = (int) config.sessionTimeout.toMillis();
        this.leftovers = new LeftoverNodes(cf, calls, this::isConnected, context.threadFactory(),
                TimeUnit.MILLISECONDS.toNanos(sessionTimeoutMs));
    }

    /**
     * Connects to the ensemble named by the context's URI and waits, at most the operation
     * timeout, for a session.
     *
     * @param context the client's context
     * @return the connected backend
     * @throws IllegalArgumentException if the URI is invalid (naming the part)
     * @throws LockBackendException if no session could be established within the operation timeout
     */
    public static ZkBackend open(BackendContext context) {
        ZkConfig config = ZkConfig.from(context.uri());
        Duration timeout = context.operationTimeout();
        int timeoutMs = (int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(LeaseTimes.saturatedNanos(timeout))));
        ExecutorService runSafe = new ThreadPoolExecutor(0, 1, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                context.threadFactory());
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                .connectString(config.connectString)
                .sessionTimeoutMs((int) config.sessionTimeout.toMillis())
                .connectionTimeoutMs(timeoutMs)
                // no retries inside Curator: the core retries, and a blind retry of a create could queue twice
                .retryPolicy(new RetryNTimes(0, 0))
                .threadFactory(context.threadFactory())
                .runSafeService(runSafe)
                // the ensemble tracker would replace the configured addresses with the servers' own
                .ensembleTracker(false)
                .waitForShutdownTimeoutMs(timeoutMs)
                .maxCloseWaitMs(timeoutMs)
                .aclProvider(aclProvider(config));
        if (config.hasCredentials()) {
            builder.authorization("digest", (config.user + ":" + config.password).getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework cf = builder.build();
        ZkBackend backend = new ZkBackend(config, context, cf, new Calls(timeout), runSafe);
        cf.getConnectionStateListenable().addListener((client, state) -> backend.stateChanged(state));
        // a server that refuses the credentials says so once per connection (AuthFailed, after the
        // connection's SyncConnected) and closes it: remembered, so that the failures it causes are
        // reported as what they are
        cf.getCuratorListenable().addListener((client, event) -> {
            WatchedEvent w = event.getWatchedEvent();
            if (event.getType() == CuratorEventType.WATCHED && w != null && w.getType() == Watcher.Event.EventType.None) {
                if (w.getState() == Watcher.Event.KeeperState.AuthFailed) {
                    LOG.debug("dlock: ZooKeeper at {} refused the credentials", config.shown);
                    backend.calls.credentialsRefused(true);
                } else if (w.getState() == Watcher.Event.KeeperState.SyncConnected) {
                    backend.calls.credentialsRefused(false);
                }
            }
        });
        boolean connected;
        List<AddressProbe.Finding> findings = null;
        long deadline = Deadline.after(timeout).nanoTime();
        try {
            cf.start();
            connected = cf.blockUntilConnected((int) Math.min(timeoutMs, FIRST_LOOK.toMillis()), TimeUnit.MILLISECONDS);
            if (!connected) {
                // no session yet: look at the addresses. Where nothing listens, a refused connection
                // is known at once, and waiting out the timeout would only hide it
                findings = AddressProbe.probe(config.addresses, min(PROBE_BUDGET, remaining(deadline)));
                if (!AddressProbe.nothingListens(findings)) {
                    long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                    connected = left > 0 && cf.blockUntilConnected((int) Math.min(Integer.MAX_VALUE, left),
                            TimeUnit.MILLISECONDS);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            backend.closeUnconnected();
            throw new LockBackendException("interrupted while connecting to ZooKeeper at " + config.connectString,
                    null, e);
        } catch (RuntimeException e) {
            backend.closeUnconnected();
            throw new LockBackendException("could not start a ZooKeeper client for " + config.connectString + ": "
                    + e.getMessage(), null, e);
        }
        if (!connected) {
            backend.closeUnconnected();
            // say what is there (the probe's findings from the start of the wait): a wrong port and a
            // stopped server look the same to the client
            String found = findings.stream().map(f -> f.describe("ZooKeeper")).collect(Collectors.joining("; "));
            throw new LockBackendException(AddressProbe.nothingListens(findings)
                    ? "could not connect to ZooKeeper at " + config.connectString + ": " + found
                    : "could not connect to ZooKeeper at " + config.connectString + " within the operation timeout of "
                    + timeout + ": " + found, null, null);
        }
        backend.refreshSession();
        LOG.debug("dlock: connected to ZooKeeper at {}, session timeout {} ms", config.connectString,
                backend.sessionTimeoutMs);
        return backend;
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    /** @return the time left until a {@link System#nanoTime()} deadline, zero if it passed */
    private static Duration remaining(long deadline) {
        return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }

    /** Lock nodes and the parents dlock creates: with credentials, all rights for us and read for the world. */
    private static ACLProvider aclProvider(ZkConfig config) {
        List<ACL> acl;
        if (config.hasCredentials()) {
            // not List.of: ZooKeeper checks acl.contains(null), which an immutable list rejects
            acl = Collections.unmodifiableList(Arrays.asList(new ACL(ZooDefs.Perms.ALL, ZooDefs.Ids.AUTH_IDS),
                    new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE)));
        } else {
            acl = ZooDefs.Ids.OPEN_ACL_UNSAFE;
        }
        return new ACLProvider() {
            @Override
            public List<ACL> getDefaultAcl() {
                return acl;
            }

            @Override
            public List<ACL> getAclForPath(String path) {
                return acl;
            }
        };
    }

    // ---- connection state: the lease is the session ----

    private void stateChanged(ConnectionState state) {
        switch (state) {
            case CONNECTED:
            case RECONNECTED:
                suspendedSince = 0;
                refreshSession();
                leftovers.kick();
                wakeAttempts();
                break;
            case SUSPENDED:
            case LOST:
            case READ_ONLY:
                suspended(state);
                break;
            default:
                break;
        }
    }

    /** Every lease of this client is lost, for good; their nodes are deleted once we can. */
    private void suspended(ConnectionState state) {
        List<ZkGrant> lost;
        if (suspendedSince == 0) {
            suspendedSince = System.nanoTime() | 1; // never 0
        }
        synchronized (stateLock) {
            epoch++;
            lost = new ArrayList<>(granted.values());
            granted.clear();
        }
        if (closed.get()) {
            return;
        }
        if (!lost.isEmpty()) {
            LOG.warn("dlock: ZooKeeper connection {} ({}): reporting {} held lease(s) lost", state,
                    config.shown, lost.size());
        }
        // The core releases each lost lease itself once its onLost listeners ran, so nobody gets a lock
        // before its holder was told; the clean-up deletes what that release could not, and, a while
        // later, anything the core never released.
        context.events().allLeasesLost(LostReason.SESSION_LOST);
        for (ZkGrant g : lost) {
            leftovers.deletePathLater(parentOf(g.path), g.path, LOST_NODE_GRACE_MILLIS);
        }
        wakeAttempts();
    }

    private void refreshSession() {
        try {
            int negotiated = cf.getZookeeperClient().getZooKeeper().getSessionTimeout();
            if (negotiated > 0) {
                sessionTimeoutMs = negotiated;
                leftovers.sweepKeep(TimeUnit.MILLISECONDS.toNanos(2L * negotiated));
            }
        } catch (Exception e) {
            LOG.debug("dlock: could not read the ZooKeeper session timeout", e);
        }
    }

    boolean isConnected() {
        return !closed.get() && cf.getZookeeperClient().isConnected();
    }

    /**
     * Whether the session, and with it a queued node, may still be alive: connected as far as
     * Curator knows, or suspended for less than the session timeout.
     */
    boolean sessionMayBeAlive() {
        long since = suspendedSince;
        return !closed.get()
                && (since == 0 || System.nanoTime() - since < TimeUnit.MILLISECONDS.toNanos(sessionTimeoutMs));
    }

    long epoch() {
        synchronized (stateLock) {
            return epoch;
        }
    }

    /**
     * Records a grant unless the connection was suspended since {@code epochAtStart} or is down now.
     *
     * @return false if the grant must not be made
     */
    boolean recordGrant(ZkGrant grant, long epochAtStart) {
        synchronized (stateLock) {
            if (epoch != epochAtStart || !isConnected()) {
                return false;
            }
            granted.put(grant.path, grant);
            return true;
        }
    }

    void attemptStarted(ZkAttempt a) {
        attempts.add(a);
    }

    void attemptEnded(ZkAttempt a) {
        attempts.remove(a);
    }

    private void wakeAttempts() {
        for (ZkAttempt a : attempts) {
            a.wake();
        }
    }

    Duration sessionTimeout() {
        return Duration.ofMillis(sessionTimeoutMs);
    }

    /** @return the parent node of a lock name's queue */
    String parentPath(String name) {
        return config.basePath + "/" + NameCodec.encode(name);
    }

    static String parentOf(String path) {
        return path.substring(0, path.lastIndexOf('/'));
    }

    static String nodeOf(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }

    void ensureOpen(String lockName) {
        if (closed.get()) {
            throw new LockBackendException("the ZooKeeper backend is closed", lockName, null);
        }
    }

    // ---- LockBackend ----

    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    /**
     * The negotiated session timeout: a holder's validity must never outlast the session that
     * keeps its node.
     */
    @Override
    public Duration maximumLeaseTime() {
        return sessionTimeout();
    }

    /**
     * Starts an acquisition; no I/O.
     *
     * @param request the lock name, owner id and lease time
     * @return the attempt
     * @throws IllegalArgumentException if the lease is longer than the session timeout now
     *     negotiated ({@link #maximumLeaseTime()})
     */
    @Override
    public AcquireAttempt<ZkGrant> newAttempt(AcquireRequest request) {
        checkLease(request.leaseTime());
        return new ZkAttempt(this, request);
    }

    /**
     * A lease may not outlast its session: the caller's mistake, as for any backend's maximum. The
     * attempt checks again before each try, since a reconnection may negotiate a shorter session.
     *
     * @throws IllegalArgumentException naming leaseTime
     */
    void checkLease(Duration lease) {
        Duration session = sessionTimeout();
        if (lease.compareTo(session) > 0) {
            throw new IllegalArgumentException("leaseTime must be at most the session timeout " + session
                    + " that ZooKeeper at " + config.shown + " negotiated (a lease may not outlast its session: see the"
                    + " uri parameter sessionTimeout and the servers' maxSessionTimeout), was " + lease);
        }
    }

    /**
     * One round trip, and one request per call however many locks it renews: a {@code sync}.
     *
     * <p>The lease is the session, so nothing per lock needs refreshing; but the core counts the
     * renewed validity from the moment this call started, so the call must prove that the server
     * heard from the session after that moment, and only an answer to a request sent now does
     * that. The session's own pings cannot stand in for it: they are sent only after a third of
     * the session timeout of silence, and nothing tells when the last one was sent. A
     * {@code sync} is the cheapest such request that the leader answers (it needs no read of any
     * node), so a follower cut off from its leader cannot vouch for a session the leader may be
     * expiring. Sending it per call, not per lock, costs {@code ⌈held / 256⌉} requests per
     * renewal interval (the core renews at most 256 leases per call).
     *
     * <p>A grant's node could still be deleted by someone else (an administrator, or another
     * client where no credentials protect the nodes). The first renewal of a grant therefore reads
     * its node with a watch, pipelined behind the {@code sync} (same round trip); the watch marks
     * the grant gone when the node is deleted, and every later renewal just looks at that mark. A
     * deletion the server ran before the {@code sync} is known by the time the {@code sync} is
     * answered: ZooKeeper delivers a session's watch events and answers in the order they
     * happened, on one event thread. A node that is gone, or is not the granted one (different
     * creation zxid), or a grant from before a suspension, is reported not held. A check that fails
     * makes only its own grant's outcome unknown; a failed {@code sync} fails the whole batch.
     */
    @Override
    public List<RenewOutcome> renew(List<Grant<ZkGrant>> locks) {
        ensureOpen(null);
        int n = locks.size();
        RenewOutcome[] out = new RenewOutcome[n];
        if (n == 0) {
            return List.of();
        }
        long deadline = calls.deadline();
        long currentEpoch = epoch();
        CompletableFuture<CuratorEvent> sync = calls.start(cb -> cf.sync().inBackground(cb).forPath("/"));
        List<CompletableFuture<CuratorEvent>> checks = null;
        for (int i = 0; i < n; i++) {
            ZkGrant g = locks.get(i).state();
            if (g != null && g.epoch == currentEpoch && !g.watched && !g.gone) {
                if (checks == null) {
                    checks = new ArrayList<>(Collections.nCopies(n, null));
                }
                // getData, not exists: on a node that is gone already it leaves no watch behind
                checks.set(i, calls.start(cb -> cf.getData().usingWatcher(g).inBackground(cb).forPath(g.path)));
            }
        }
        try {
            calls.awaitOk(sync, deadline, "sync", n == 1 ? locks.get(0).name() : null);
            for (int i = 0; i < n; i++) {
                Grant<ZkGrant> lock = locks.get(i);
                ZkGrant g = lock.state();
                if (g == null || g.epoch != currentEpoch) {
                    // granted before a suspension: reported lost then, or it raced with the report
                    context.events().leaseLost(lock.ownerId(), LostReason.SESSION_LOST);
                    out[i] = RenewOutcome.notHeld();
                    continue;
                }
                CompletableFuture<CuratorEvent> check = checks == null ? null : checks.get(i);
                if (check == null) {
                    out[i] = held(!g.gone);
                    continue;
                }
                try {
                    CuratorEvent e = calls.await(check, deadline, "renewal check", lock.name());
                    checks.set(i, null);
                    KeeperException.Code code = Calls.code(e);
                    if (code == KeeperException.Code.OK) {
                        Stat stat = e.getStat();
                        out[i] = held(stat != null && stat.getCzxid() == g.czxid && !g.gone);
                        g.watched = true;
                    } else if (code == KeeperException.Code.NONODE) {
                        out[i] = RenewOutcome.notHeld();
                    } else {
                        out[i] = RenewOutcome.unknown(calls.failure("renewal check", lock.name(), code));
                    }
                } catch (LockBackendException e) {
                    if (Thread.currentThread().isInterrupted()) {
                        throw e; // interrupted: the whole call gives up, flag kept
                    }
                    out[i] = RenewOutcome.unknown(e); // this check only (forgotten below); the next is waited for
                }
            }
        } finally {
            if (checks != null) {
                for (CompletableFuture<CuratorEvent> f : checks) {
                    if (f != null) {
                        calls.forget(f);
                    }
                }
            }
        }
        synchronized (stateLock) {
            for (int i = 0; i < n; i++) {
                ZkGrant g = locks.get(i).state();
                if (out[i] instanceof RenewOutcome.NotHeld && g != null) {
                    granted.remove(g.path); // the core will not release it
                }
            }
        }
        return List.of(out);
    }

    private static RenewOutcome held(boolean held) {
        return held ? RenewOutcome.renewed() : RenewOutcome.notHeld();
    }

    /** Deletes the grant's own node (its path holds the owner id, so it is never another grant's). */
    @Override
    public ReleaseOutcome release(Grant<ZkGrant> lock) {
        ZkGrant g = lock.state();
        if (g == null) {
            return ReleaseOutcome.NOT_HELD; // not a grant this backend made
        }
        synchronized (stateLock) {
            granted.remove(g.path);
        }
        ensureOpen(lock.name());
        long deadline = calls.deadline();
        CompletableFuture<CuratorEvent> f = calls.start(cb -> cf.delete().inBackground(cb).forPath(g.path));
        KeeperException.Code code;
        try {
            code = Calls.code(calls.await(f, deadline, "delete", lock.name()));
        } catch (LockBackendException e) {
            leftovers.deletePath(parentOf(g.path), g.path);
            throw e;
        }
        if (code == KeeperException.Code.OK) {
            leftovers.forget(g.path);
            return ReleaseOutcome.RELEASED;
        }
        if (code == KeeperException.Code.NONODE) {
            leftovers.forget(g.path);
            return ReleaseOutcome.NOT_HELD;
        }
        leftovers.deletePath(parentOf(g.path), g.path);
        throw calls.failure("delete", lock.name(), code);
    }

    /** The lowest node of the queue: its owner id (the node's data) and creation zxid. */
    @Override
    public Optional<LockHolder> holder(String name) {
        ensureOpen(name);
        long deadline = calls.deadline();
        String parent = parentPath(name);
        while (true) {
            CuratorEvent listing = calls.await(calls.start(cb -> cf.getChildren().inBackground(cb).forPath(parent)),
                    deadline, "listing", name);
            KeeperException.Code code = Calls.code(listing);
            if (code == KeeperException.Code.NONODE) {
                return Optional.empty();
            }
            if (code != KeeperException.Code.OK) {
                throw calls.failure("listing", name, code);
            }
            List<LockNode> queue = LockNode.queue(listing.getChildren());
            if (queue.isEmpty()) {
                return Optional.empty();
            }
            LockNode first = queue.get(0);
            String path = parent + "/" + first.name;
            CuratorEvent data = calls.await(calls.start(cb -> cf.getData().inBackground(cb).forPath(path)),
                    deadline, "read", name);
            code = Calls.code(data);
            if (code == KeeperException.Code.NONODE) {
                continue; // released meanwhile: look again, within the deadline
            }
            if (code != KeeperException.Code.OK) {
                throw calls.failure("read", name, code);
            }
            byte[] bytes = data.getData();
            String owner = bytes == null || bytes.length == 0 ? first.ownerId : new String(bytes, StandardCharsets.UTF_8);
            return Optional.of(new LockHolder(name, owner, data.getStat().getCzxid(), null));
        }
    }

    /**
     * Closes the session (the server deletes this client's nodes at once) and stops every thread.
     * Bounded: the server gets one operation timeout to confirm the end of the session; after that
     * the client stops waiting and drops the connection, and the server ends the session itself
     * when it expires.
     */
    @Override
    public void close() {
        close(calls.timeout());
    }

    /**
     * Clean-up of an open that never got a session: nothing to tell a server, so nothing to wait
     * for, and the failed open does not wait either. ZooKeeper's close joins its connection thread,
     * which sleeps up to a second between attempts to reach an address that refused it, and no
     * interrupt of ours reaches that sleep; so the close runs on a thread of its own, and every
     * thread of the client ends within about a second of the failure.
     */
    private void closeUnconnected() {
        Thread closer = context.threadFactory().newThread(() -> close(Duration.ZERO));
        closer.start();
    }

    private void close(Duration grace) {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        calls.close();
        wakeAttempts();
        leftovers.close();
        closeCurator(grace);
        runSafe.shutdownNow();
        try {
            if (!runSafe.awaitTermination(Calls.saturatedNanos(calls.timeout().plusSeconds(1)), TimeUnit.NANOSECONDS)) {
                LOG.warn("dlock: a ZooKeeper notification thread did not stop");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Closes Curator on a thread of its own and waits for it at most {@code grace}: ZooKeeper's
     * close waits for the server to answer the end of the session, and without a connection (a
     * server that is frozen, or a port where something else listens) that wait lasts until the
     * client gives up on the connection, up to the session timeout. After the grace the closing
     * thread is interrupted, which makes ZooKeeper stop waiting and drop the connection and its
     * threads.
     */
    private void closeCurator(Duration grace) {
        Thread closer = context.threadFactory().newThread(() -> {
            try {
                cf.close();
            } catch (RuntimeException e) {
                LOG.warn("dlock: closing the ZooKeeper client failed", e);
            }
        });
        closer.start();
        boolean interrupted = join(closer, grace);
        if (closer.isAlive()) {
            closer.interrupt(); // the grace is over: stop waiting for the server
            interrupted |= join(closer, calls.timeout());
            if (closer.isAlive()) {
                LOG.warn("dlock: the ZooKeeper client did not stop within {} of being interrupted; its threads end "
                        + "when ZooKeeper gives up on the connection", calls.timeout());
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits at most {@code max} for a thread to end, not giving in to interrupts; returns whether one came. */
    private static boolean join(Thread t, Duration max) {
        long end = System.nanoTime() + Calls.saturatedNanos(max);
        boolean interrupted = false;
        while (t.isAlive()) {
            long left = end - System.nanoTime();
            if (left <= 0) {
                break;
            }
            try {
                TimeUnit.NANOSECONDS.timedJoin(t, left);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        return interrupted;
    }

    @Override
    public String toString() {
        return "ZkBackend{" + config.shown + (closed.get() ? ", closed" : "") + "}";
    }
}
