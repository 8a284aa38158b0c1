package io.dlock.redis.internal;

import io.dlock.LockBackendException;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendUri;
import io.dlock.spi.support.LeaseTimes;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import javax.net.ssl.SSLSocketFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisAskDataException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisRedirectionException;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * Where the scripts of Redis Cluster mode run: the primary that owns the hash slot of the
 * script's keys. One {@link RedisConnections} per node (made on first use, with the settings
 * aimed at that node), and a slot table filled lazily from {@code CLUSTER SLOTS}, asked of a known
 * node or a seed on the calling thread within the call's budget. No I/O when opened; no thread.
 *
 * <p>Routing, until the call's budget is spent: {@code MOVED} sets the slot's owner, asks for a
 * refresh, and retries at the new owner; {@code ASK} retries once at the importing node after
 * {@code ASKING} (no table change); {@code TRYAGAIN} (a multi-key script while its slot migrates)
 * and {@code CLUSTERDOWN} (a failover under way) retry after a short random pause; a refused or
 * broken connection refreshes the table and retries. Every script is safe to repeat (see
 * {@link Script}), so a retry elsewhere never grants twice. A read timeout is not retried: the
 * budget is spent. Thread-safe.
 */
final class ClusterConnections implements ScriptRunner {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterConnections.class);

    /** The least time between two refreshes of the slot table, unless it is empty. */
    private static final long REFRESH_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** The busy hint of an acquire that met only TRYAGAIN (its slot migrating) for its whole budget. */
    private static final long TRYAGAIN_BUSY_MILLIS = 50;
    /** The least time between two warm-ups of one node. */
    private static final long WARM_UP_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** The shortest budget one node gets for {@code CLUSTER SLOTS} while others are left to ask. */
    private static final long MIN_REFRESH_TRY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final RedisSettings settings;
    private final Function<HostAndPort, RedisConnections> connect;
    private final List<HostAndPort> seeds;
    private final Map<HostAndPort, RedisConnections> nodes = new ConcurrentHashMap<>();
    /** The primary of each slot as last learned; null while unknown. */
    private final AtomicReferenceArray<HostAndPort> owners = new AtomicReferenceArray<>(ClusterKeys.SLOTS);
    private final ReentrantLock refreshLock = new ReentrantLock();
    private final AtomicInteger nextSubscriberNode = new AtomicInteger();
    /** When each node's lock-delay markers were last warmed up (System.nanoTime). */
    private final Map<HostAndPort, Long> warmedAt = new ConcurrentHashMap<>();
    private final AtomicBoolean warming = new AtomicBoolean();
    private final ThreadFactory threads;
    private final long timeoutNanos;
    private volatile long refreshedAt;
    private volatile boolean refreshed;
    private volatile boolean stale = true;
    private volatile boolean closed;

    /**
     * No I/O.
     *
     * @param settings the URI's settings; its hosts are the seeds
     * @param connect makes the connections of one node (called once per node)
     * @param threads the client's thread factory, for the lock-delay warm-up
     * @param operationTimeout the budget of a call
     */
    ClusterConnections(RedisSettings settings, Function<HostAndPort, RedisConnections> connect, ThreadFactory threads,
                       Duration operationTimeout) {
        this.settings = settings;
        this.threads = threads;
        this.timeoutNanos = LeaseTimes.saturatedNanos(operationTimeout);
        this.connect = connect;
        List<HostAndPort> s = new ArrayList<>();
        for (BackendUri.HostPort h : settings.hosts) {
            s.add(new HostAndPort(h.host(), h.port()));
        }
        this.seeds = List.copyOf(s);
    }

    /**
     * Opens the connections of a {@code redis-cluster://} URI; no I/O.
     *
     * @param settings the URI's settings
     * @param setup how to connect to one node with a given connect and read timeout in ms
     * @param threads the client's thread factory
     * @param operationTimeout the budget of a call
     */
    static ClusterConnections open(RedisSettings settings, NodeSetup setup, ThreadFactory threads,
                                   Duration operationTimeout) {
        return new ClusterConnections(settings, address -> new RedisConnections(
                settings.forNode(address.getHost(), address.getPort()), millis -> setup.setup(address, millis),
                operationTimeout), threads, operationTimeout);
    }

    /**
     * Opens a backend for a {@code redis-cluster://} URI: the slotted key layout, scripts routed by
     * slot, and one pub/sub connection to any node for waiters. No I/O.
     *
     * @param context the client's URI, timeouts and thread factory
     * @param settings the URI's settings
     * @param sslSocketFactory the socket factory for {@code rediss-cluster://}, or null for the JVM default
     * @param addressMap from an address the cluster names to the address to connect to
     * @return the backend
     */
    static RedisLockBackend openBackend(BackendContext context, RedisSettings settings,
                                        SSLSocketFactory sslSocketFactory, UnaryOperator<InetSocketAddress> addressMap) {
        ClusterKeys keys = new ClusterKeys(settings.prefix);
        ClusterConnections connections = open(settings, (address, millis) -> {
            JedisClientConfig config = RedisLockBackend.clientConfig(settings, millis);
            return new RedisConnections.Setup(config, new RedisSocketFactory(map(addressMap, address), config,
                    settings.tls, sslSocketFactory));
        }, context.threadFactory(), context.operationTimeout());
        RedisSocketFactory subscriberSockets = new RedisSocketFactory(() -> map(addressMap, connections.subscriberNode()),
                RedisLockBackend.clientConfig(settings, RedisLockBackend.timeoutMillis(context)), settings.tls,
                sslSocketFactory);
        return new RedisLockBackend(context, settings, keys, connections,
                RedisLockBackend.subscriber(context, settings, keys, subscriberSockets));
    }

    /** Where to connect for an address the cluster names. */
    private static HostAndPort map(UnaryOperator<InetSocketAddress> addressMap, HostAndPort address) {
        InetSocketAddress to = addressMap.apply(InetSocketAddress.createUnresolved(address.getHost(), address.getPort()));
        return to == null ? address : new HostAndPort(to.getHostString(), to.getPort());
    }

    /** How to make one connection to a node. */
    interface NodeSetup {
        /**
         * @param address the node
         * @param millis the connect and read timeout
         * @return the jedis configuration and socket factory
         */
        RedisConnections.Setup setup(HostAndPort address, int millis);
    }

    /** The slot of a key as Redis computes it (the hash tag's, for dlock's keys). */
    static int keySlot(String key) {
        return JedisClusterCRC16.getSlot(key);
    }

    /** @return the lock name's slot: a renewal script carries only leases of one slot */
    @Override
    public int shard(String name) {
        return ClusterKeys.slot(name);
    }

    @Override
    public Object eval(Script script, List<String> keys, List<String> args, String operation, String lockName,
                       long budgetNanos, Predicate<Object> wrote) {
        long deadline = System.nanoTime() + budgetNanos;
        int slot = keySlot(keys.get(0));
        HostAndPort target = null;
        boolean asking = false;
        LockBackendException last = null;
        boolean mayHaveRun = false;
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || closed) {
                if (script == Script.ACQUIRE && !mayHaveRun && !closed && last instanceof Redirect r
                        && r.kind == Redirect.Type.TRYAGAIN) {
                    // the slot is migrating and the lock is free: nothing ran, no grant is possible until the
                    // migration ends, so the lock is busy for now (a failure would end a waiting acquisition)
                    return List.of(0L, TRYAGAIN_BUSY_MILLIS);
                }
                throw outOfTime(operation, lockName, budgetNanos, last);
            }
            if (target == null) {
                target = owner(slot, deadline);
            }
            HostAndPort at = target;
            boolean ask = asking;
            target = null;
            asking = false;
            try {
                Object reply = node(at).eval(script, keys, args, operation, lockName, left, wrote, ask);
                if (script == Script.ACQUIRE && lockDelayed(reply)) {
                    startWarmUp(args.get(2));
                }
                return reply;
            } catch (Redirect r) {
                last = r;
                switch (r.kind) {
                    case MOVED -> {
                        owners.set(r.slot, r.target);
                        stale = true;
                        target = r.target;
                    }
                    case ASK -> {
                        target = r.target;
                        asking = true;
                    }
                    case TRYAGAIN -> {
                        if (script == Script.RENEW && keys.size() > 1) {
                            // a slot migrating with some of these leases' keys moved (or ended): a multi-key
                            // call gets TRYAGAIN until the migration ends, a single key follows ASK
                            return renewOneByOne(keys, args, operation, wrote, deadline);
                        }
                        if (!pause(10, 50, deadline)) {
                            throw outOfTime(operation, lockName, budgetNanos, last);
                        }
                    }
                    case CLUSTERDOWN -> {
                        stale = true;
                        if (!pause(50, 100, deadline)) {
                            throw outOfTime(operation, lockName, budgetNanos, last);
                        }
                    }
                    default -> throw new IllegalStateException(r.kind.toString());
                }
            } catch (LockConfigurationException e) {
                throw e;
            } catch (LockBackendException e) {
                if (!refused(e)) {
                    throw e; // a timeout: the budget is spent; or a failure a retry would meet too
                }
                // the node is down (a failover may be under way) or restarting: ask the others
                last = e;
                mayHaveRun |= !RedisConnections.hasCause(e, ConnectException.class);
                stale = true;
                if (!pause(20, 60, deadline)) {
                    throw outOfTime(operation, lockName, budgetNanos, last);
                }
            }
        }
    }

    /**
     * A renewal of several leases of one slot, one lease per call; the reply as the batch's would be.
     * A call that fails makes the whole batch's outcome unknown.
     */
    private Object renewOneByOne(List<String> keys, List<String> args, String operation, Predicate<Object> wrote,
                                 long deadline) {
        int n = keys.size();
        List<Object> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Object r = eval(Script.RENEW, List.of(keys.get(i)), List.of(args.get(i), args.get(n + i)), operation, null,
                    Math.max(1, deadline - System.nanoTime()), wrote);
            if (!(r instanceof List<?> one) || one.size() != 1) {
                return r; // not a renewal's answer: the backend reports it
            }
            out.add(one.get(0));
        }
        return out;
    }

    /** Whether an acquire's reply says its slot's lock-delay refuses grants ({2, left, ...}). */
    private static boolean lockDelayed(Object reply) {
        return reply instanceof List<?> l && !l.isEmpty() && Long.valueOf(2L).equals(l.get(0));
    }

    /**
     * After a slot answered that its lock-delay runs, starts the lock-delay of every other slot
     * whose marker is missing or names another server process, on every known primary
     * ({@link Script#WARM_UP}): a node that lost its data lost every slot's marker, and without
     * this each slot would start its lock-delay only at its own first grant, so that fresh names
     * would wait a lock-delay long after the loss. At most once a second per node, on a thread of
     * the client's factory that ends when done (one at a time); best effort: a node that fails is
     * tried again at the next such reply, and its slots meanwhile start at first touch.
     */
    private void startWarmUp(String lockDelayMillis) {
        if (closed || !warming.compareAndSet(false, true)) {
            return;
        }
        try {
            Thread t = threads.newThread(() -> {
                try {
                    warmUp(lockDelayMillis);
                } finally {
                    warming.set(false);
                }
            });
            t.start();
        } catch (RuntimeException | Error e) {
            warming.set(false);
            LOG.debug("dlock: cannot start the lock-delay warm-up thread", e);
        }
    }

    private void warmUp(String lockDelayMillis) {
        long now = System.nanoTime();
        Map<HostAndPort, List<String>> tagsByNode = new java.util.HashMap<>();
        for (int s = 0; s < ClusterKeys.SLOTS; s++) {
            HostAndPort h = owners.get(s);
            if (h != null) {
                tagsByNode.computeIfAbsent(h, k -> {
                    List<String> a = new ArrayList<>();
                    a.add(settings.prefix);
                    a.add(lockDelayMillis);
                    return a;
                }).add(ClusterKeys.tag(s));
            }
        }
        for (Map.Entry<HostAndPort, List<String>> e : tagsByNode.entrySet()) {
            Long last = warmedAt.get(e.getKey());
            if (last != null && now - last < WARM_UP_INTERVAL_NANOS) {
                continue;
            }
            if (closed) {
                return;
            }
            try {
                Object n = node(e.getKey()).eval(Script.WARM_UP, List.of(), e.getValue(), "lock-delay warm-up", null,
                        timeoutNanos, null, false);
                warmedAt.put(e.getKey(), now);
                LOG.debug("dlock: lock-delay warm-up on {} started {} slots' lock-delays", e.getKey(), n);
            } catch (LockBackendException ex) {
                LOG.debug("dlock: lock-delay warm-up on {} failed; its slots start their lock-delays at first touch",
                        e.getKey(), ex);
            }
        }
    }

    /**
     * Whether a failure came fast, before the node could run anything, or the connection broke:
     * worth asking the cluster again. Scripts are safe to repeat, so a broken connection is too.
     */
    private static boolean refused(LockBackendException e) {
        return RedisConnections.hasCause(e, ConnectException.class)
                || (RedisConnections.hasCause(e, JedisConnectionException.class)
                && !RedisConnections.hasCause(e, java.net.SocketTimeoutException.class));
    }

    private LockBackendException outOfTime(String operation, String lockName, long budgetNanos,
                                           LockBackendException last) {
        String what = lockName == null ? operation : operation + " of lock '" + lockName + "'";
        long ms = TimeUnit.NANOSECONDS.toMillis(budgetNanos);
        if (closed) {
            return new LockBackendException("the " + what + " failed: the client is closing", lockName, null);
        }
        if (Thread.currentThread().isInterrupted()) {
            return new LockBackendException("the " + what + " on the Redis Cluster " + seeds + " was interrupted before"
                    + " it could retry" + (last == null ? "" : " (last answer: " + last.getMessage() + ")"), lockName, last);
        }
        if (last == null) {
            return new LockBackendException("the " + what + " on the Redis Cluster " + seeds + " ran out of its "
                    + ms + " ms", lockName, null);
        }
        if (last instanceof Redirect r) {
            return new LockBackendException("the " + what + " on the Redis Cluster " + seeds + " did not reach the"
                    + " primary of its hash slot within " + ms + " ms (last answer: " + r.getMessage() + "): the"
                    + " slot may be migrating or failing over; check CLUSTER INFO and CLUSTER SLOTS", lockName, r);
        }
        return last;
    }

    /**
     * Waits a random while before a retry, within the deadline.
     *
     * @return false if the thread was interrupted: then no more retries (the flag is kept, the
     *     interrupt rule), since every later wait would end at once
     */
    private static boolean pause(int fromMillis, int toMillis, long deadline) {
        long nanos = Math.min(deadline - System.nanoTime(),
                TimeUnit.MILLISECONDS.toNanos(ThreadLocalRandom.current().nextInt(fromMillis, toMillis + 1)));
        if (Thread.currentThread().isInterrupted()) {
            return false;
        }
        if (nanos <= 0) {
            return true;
        }
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }


    /** The node to send a slot's call to: the table's, refreshed if stale or unknown; a seed at worst. */
    private HostAndPort owner(int slot, long deadline) {
        HostAndPort owner = owners.get(slot);
        if (owner == null || stale) {
            refresh(deadline, owner == null);
            owner = owners.get(slot);
        }
        if (owner == null) {
            // no node told us: any seed answers MOVED to the owner
            owner = seeds.get(ThreadLocalRandom.current().nextInt(seeds.size()));
        }
        return owner;
    }

    private RedisConnections node(HostAndPort address) {
        RedisConnections c = nodes.get(address);
        return c != null ? c : nodes.computeIfAbsent(address, connect);
    }

    /**
     * Fills the slot table from {@code CLUSTER SLOTS}, asked of known primaries and then the seeds
     * in turn, within the deadline; at most every 100 ms unless forced (an unknown slot). A
     * configuration failure (credentials, ACL, not a cluster node) is thrown; others leave the
     * table as it was.
     */
    private void refresh(long deadline, boolean force) {
        if (!refreshLock.tryLock()) {
            // another thread refreshes: wait for it within the budget, then use what it found
            try {
                if (!refreshLock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    return;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (refreshed && System.nanoTime() - refreshedAt < REFRESH_INTERVAL_NANOS) {
                refreshLock.unlock();
                return;
            }
        }
        try {
            if (!force && refreshed && System.nanoTime() - refreshedAt < REFRESH_INTERVAL_NANOS) {
                return;
            }
            List<HostAndPort> candidates = new ArrayList<>(knownPrimaries());
            Collections.shuffle(candidates);
            for (HostAndPort s : seeds) {
                if (!candidates.contains(s)) {
                    candidates.add(s);
                }
            }
            for (int i = 0; i < candidates.size(); i++) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                HostAndPort c = candidates.get(i);
                long budget = i == candidates.size() - 1 ? left : Math.min(left, Math.max(MIN_REFRESH_TRY_NANOS, left / 2));
                Object reply;
                try {
                    reply = node(c).command(new CommandArguments(Protocol.Command.CLUSTER).add("SLOTS"),
                            "cluster topology query (CLUSTER SLOTS)", budget);
                } catch (LockConfigurationException e) {
                    if (e.kind() == Kind.PERMISSION) {
                        throw new LockConfigurationException(Kind.PERMISSION, e.getMessage() + "; in Redis Cluster"
                                + " mode also CLUSTER SLOTS (+cluster|slots) and ASKING", null, e);
                    }
                    throw e;
                } catch (LockBackendException e) {
                    if ("ERR".equals(RedisConnections.errorCode(e))) {
                        throw new LockConfigurationException(Kind.INCOMPATIBLE_SERVER, "the Redis at " + c
                                + " refused CLUSTER SLOTS (" + settings.uri.scrub(String.valueOf(e.getMessage()))
                                + "): " + settings.uri.scheme() + ":// needs the nodes of a Redis Cluster; for one"
                                + " primary use redis://", null, null);
                    }
                    LOG.debug("dlock: CLUSTER SLOTS on {} failed", c, e);
                    continue;
                }
                if (apply(reply, c)) {
                    refreshedAt = System.nanoTime();
                    refreshed = true;
                    stale = false;
                    return;
                }
            }
        } finally {
            refreshLock.unlock();
        }
    }

    /** The distinct primaries of the table. */
    private Set<HostAndPort> knownPrimaries() {
        Set<HostAndPort> out = new LinkedHashSet<>();
        for (int s = 0; s < ClusterKeys.SLOTS; s++) {
            HostAndPort h = owners.get(s);
            if (h != null) {
                out.add(h);
            }
        }
        return out;
    }

    /**
     * Reads a {@code CLUSTER SLOTS} reply: ranges of {start, end, primary {host, port, ...},
     * replicas...}. A host of {@code ""} or {@code ?} is the node asked. Slots no range covers
     * become unknown.
     *
     * @return whether the reply had the expected shape (and named at least one slot)
     */
    private boolean apply(Object reply, HostAndPort asked) {
        if (!(reply instanceof List<?> ranges)) {
            return false;
        }
        HostAndPort[] table = new HostAndPort[ClusterKeys.SLOTS];
        int covered = 0;
        for (Object r : ranges) {
            if (!(r instanceof List<?> range) || range.size() < 3 || !(range.get(0) instanceof Long from)
                    || !(range.get(1) instanceof Long to) || !(range.get(2) instanceof List<?> primary)
                    || primary.size() < 2 || !(primary.get(1) instanceof Long port)
                    || from < 0 || to >= ClusterKeys.SLOTS || from > to) {
                return false;
            }
            String host = primary.get(0) instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : "";
            HostAndPort h = host.isEmpty() || host.equals("?") ? new HostAndPort(asked.getHost(), port.intValue())
                    : new HostAndPort(host, port.intValue());
            for (int s = from.intValue(); s <= to; s++) {
                table[s] = h;
                covered++;
            }
        }
        if (covered == 0) {
            return false;
        }
        for (int s = 0; s < ClusterKeys.SLOTS; s++) {
            owners.set(s, table[s]);
        }
        return true;
    }

    /**
     * The node the waiters' pub/sub connection uses at its next connect: the cluster bus carries a
     * classic {@code PUBLISH} to every node, so any node will do; each connect takes the next known
     * primary or seed, so that a dead node is left behind. No I/O.
     *
     * @return a node's address
     */
    HostAndPort subscriberNode() {
        List<HostAndPort> candidates = new ArrayList<>(knownPrimaries());
        for (HostAndPort s : seeds) {
            if (!candidates.contains(s)) {
                candidates.add(s);
            }
        }
        return candidates.get(Math.floorMod(nextSubscriberNode.getAndIncrement(), candidates.size()));
    }

    @Override
    public void close() {
        closed = true;
        for (RedisConnections c : nodes.values()) {
            c.close();
        }
    }

    @Override
    public String toString() {
        return "ClusterConnections{" + seeds + ", " + nodes.size() + " nodes}";
    }

    /**
     * A cluster's answer that the call belongs elsewhere or later: {@code MOVED}, {@code ASK},
     * {@code TRYAGAIN} or {@code CLUSTERDOWN}. Made by {@link RedisConnections#failure} in Cluster
     * mode and followed by {@link ClusterConnections}; it leaves the backend only as the cause of
     * a failure.
     */
    static final class Redirect extends LockBackendException {
        private static final long serialVersionUID = 1L;

        /** Which answer. */
        enum Type { MOVED, ASK, TRYAGAIN, CLUSTERDOWN }

        final Type kind;
        /** The node named by MOVED or ASK, else null. */
        final transient HostAndPort target;
        final int slot;

        private Redirect(Type kind, HostAndPort target, int slot, String message, String lockName) {
            super(message, lockName, null);
            this.kind = kind;
            this.target = target;
            this.slot = slot;
        }

        /**
         * @return the redirection a failure is, or null if it is none
         */
        static Redirect of(Throwable e, String server, String lockName) {
            for (Throwable t : RedisConnections.chain(e)) {
                if (t instanceof JedisRedirectionException r && r.getTargetNode() != null) {
                    Type type = t instanceof JedisAskDataException ? Type.ASK : Type.MOVED;
                    return new Redirect(type, r.getTargetNode(), r.getSlot(), server + " answered " + type + " "
                            + r.getSlot() + " " + r.getTargetNode(), lockName);
                }
            }
            String code = RedisConnections.errorCode(e);
            if ("TRYAGAIN".equals(code)) {
                return new Redirect(Type.TRYAGAIN, null, -1, server + " answered TRYAGAIN (the slot is migrating)",
                        lockName);
            }
            if ("CLUSTERDOWN".equals(code)) {
                return new Redirect(Type.CLUSTERDOWN, null, -1, server + " answered CLUSTERDOWN (the cluster is"
                        + " failing over or has slots without a primary)", lockName);
            }
            return null;
        }
    }
}
