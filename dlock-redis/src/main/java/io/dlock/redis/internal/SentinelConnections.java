package io.dlock.redis.internal;

import io.dlock.LockBackendException;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendUri;
import io.dlock.spi.support.LeaseTimes;
import io.dlock.spi.support.UriReader;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import javax.net.ssl.SSLSocketFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Where scripts run in Sentinel mode ({@code redis-sentinel://}): the primary that the sentinels
 * name for the URI's master name at the time of the call. Thread-safe.
 *
 * <p>The primary is found lazily, on the first call (opening does no I/O), by asking the
 * sentinels {@code SENTINEL GET-MASTER-ADDR-BY-NAME}, the one that answered last first, each on a
 * short-lived connection within what is left of the call's budget. Each primary address gets its
 * own {@link RedisConnections} (so a flip back reuses its pool), whose new connections must answer
 * {@code ROLE} with {@code master} (a user without the permission for {@code ROLE} skips the check:
 * a replica still refuses the scripts' writes with {@code READONLY}).
 *
 * <p>Following a failover: a call that meets {@code READONLY}, {@code LOADING},
 * {@code MASTERDOWN}, a refused connection or another fast connection failure asks the sentinels
 * again (at most once per {@link #RESOLVE_INTERVAL_NANOS} for the whole client) and runs once more
 * within its budget, on the primary they name: nothing ran, or the script is safe to repeat (see
 * {@link Script}). A read timeout stays an unknown outcome, as with one primary; it only makes the
 * next call ask the sentinels first, so that a primary cut off for good is left. When the primary
 * changes, the waiters' pub/sub connection is dropped, and its next connect goes to the new one.
 *
 * <p>No thread of its own: every resolution runs on the calling thread (or on the pub/sub thread,
 * which comes from the client's thread factory).
 */
final class SentinelConnections implements ScriptRunner {

    private static final Logger LOG = LoggerFactory.getLogger(SentinelConnections.class);

    /** The least time between two resolutions after failures, for the whole client. */
    static final long RESOLVE_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** The least time a sentinel gets to answer, even when several share a short budget. */
    private static final long MIN_SENTINEL_MILLIS = 100;
    /** The least budget worth a retry on the new primary. */
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private final RedisSettings settings;
    private final Duration operationTimeout;
    private final long timeoutNanos;
    private final SSLSocketFactory sslSocketFactory;
    private final Map<HostAndPort, RedisConnections> nodes = new ConcurrentHashMap<>();
    private final ReentrantLock resolving = new ReentrantLock();
    /** The primary the sentinels named last, or null before the first answer. */
    private volatile HostAndPort primary;
    /** Whether a call failed on {@link #primary} since the sentinels named it: the next call asks them first. */
    private volatile boolean suspect;
    /** The sentinel that answered last: asked first. */
    private volatile int lastGood;
    private long resolvedAt; // guarded by resolving
    private volatile Runnable onSwitch = () -> { };
    private volatile boolean closed;

    SentinelConnections(RedisSettings settings, Duration operationTimeout, SSLSocketFactory sslSocketFactory) {
        this.settings = settings;
        this.operationTimeout = operationTimeout;
        this.timeoutNanos = LeaseTimes.saturatedNanos(operationTimeout);
        this.sslSocketFactory = sslSocketFactory;
    }

    /**
     * Opens a Sentinel-mode backend for one client; no I/O.
     *
     * @param context the client's URI, timeouts and thread factory
     * @param settings the URI's settings (mode {@code SENTINEL})
     * @param sslSocketFactory the socket factory for {@code rediss-sentinel://}, or null for the JVM default
     * @return the backend
     */
    static RedisLockBackend open(BackendContext context, RedisSettings settings, SSLSocketFactory sslSocketFactory) {
        Keys keys = new Keys(settings.prefix);
        SentinelConnections connections = new SentinelConnections(settings, context.operationTimeout(), sslSocketFactory);
        JedisClientConfig config = RedisLockBackend.clientConfig(settings, RedisLockBackend.timeoutMillis(context));
        // the pub/sub connection asks the sentinels at each connect (rare: at most once a second)
        ReleaseSubscriber subscriber = RedisLockBackend.subscriber(context, settings, keys,
                new RedisSocketFactory(connections::subscriberAddress, config, settings.tls, sslSocketFactory));
        connections.onSwitch = subscriber::reconnect;
        return new RedisLockBackend(context, settings, keys, connections, subscriber);
    }

    @Override
    public Object eval(Script script, List<String> keys, List<String> args, String operation, String lockName,
                       long budgetNanos, Predicate<Object> wrote) {
        long deadline = System.nanoTime() + budgetNanos;
        HostAndPort node = suspect ? recheck(deadline, operation, lockName) : current(deadline, operation, lockName);
        try {
            return node(node).eval(script, keys, args, operation, lockName, deadline - System.nanoTime(), wrote);
        } catch (LockBackendException e) {
            if (e instanceof LockConfigurationException) {
                throw e;
            }
            suspect = true;
            if (!moved(e, budgetNanos) || deadline - System.nanoTime() < MIN_RETRY_NANOS) {
                throw e;
            }
            HostAndPort next;
            try {
                next = resolve(node, deadline, operation, lockName);
            } catch (LockBackendException again) {
                e.addSuppressed(again);
                throw e;
            }
            long left = deadline - System.nanoTime();
            if (left < MIN_RETRY_NANOS) {
                throw e;
            }
            LOG.debug("dlock: the {} failed on {} ({}); running it on {}", operation, node, e.getMessage(), next);
            return node(next).eval(script, keys, args, operation, lockName, left, wrote);
        }
    }

    /**
     * Whether a failure says that the node is not (or no longer) a working primary, and nothing
     * of the call can have run elsewhere: a replica's or a loading server's refusal, a refused
     * connection, or a connection failure that came fast (not a timeout, whose outcome is unknown).
     */
    private static boolean moved(LockBackendException e, long budgetNanos) {
        String code = RedisConnections.errorCode(e);
        if ("READONLY".equals(code) || "LOADING".equals(code) || "MASTERDOWN".equals(code)) {
            return true;
        }
        if (RedisConnections.hasCause(e, ConnectException.class)) {
            return true;
        }
        return RedisConnections.hasCause(e, JedisConnectionException.class)
                && !RedisConnections.hasCause(e, SocketTimeoutException.class)
                && !RedisConnections.hasCause(e, JedisDataException.class);
    }

    /**
     * After a failure that did not show a moved primary (a timeout): asks the sentinels again, but
     * keeps to the known primary if they cannot answer (they may be down while it is fine).
     */
    private HostAndPort recheck(long deadline, String operation, String lockName) {
        HostAndPort known = primary;
        long now = System.nanoTime();
        try {
            // at most half the call's budget, so that the call itself keeps time on the primary
            return resolve(null, known == null ? deadline : now + (deadline - now) / 2, operation, lockName);
        } catch (LockBackendException e) {
            if (known == null || e instanceof LockConfigurationException) {
                throw e;
            }
            LOG.debug("dlock: the sentinels of {} could not be asked again; staying with {}", describe(), known, e);
            return known;
        }
    }

    /** The primary the sentinels named last, asking them if none did yet. */
    private HostAndPort current(long deadline, String operation, String lockName) {
        HostAndPort p = primary;
        return p != null ? p : resolve(null, deadline, operation, lockName);
    }

    /**
     * The primary for the pub/sub connection's connect: the sentinels are asked anew (the
     * connection is made rarely, and often because the old one broke).
     */
    private HostAndPort subscriberAddress() {
        try {
            return resolve(primary, System.nanoTime() + timeoutNanos, "pub/sub connection", null);
        } catch (LockBackendException e) {
            throw new JedisConnectionException(e.getMessage(), e);
        }
    }

    /**
     * Asks the sentinels for the primary, unless another thread did since {@code stale} was
     * current or did so less than {@link #RESOLVE_INTERVAL_NANOS} ago.
     *
     * @param stale the primary a call just failed on, or null
     * @return the primary to use
     * @throws LockBackendException if no sentinel named it within the deadline
     */
    private HostAndPort resolve(HostAndPort stale, long deadline, String operation, String lockName) {
        String what = lockName == null ? operation : operation + " of lock '" + lockName + "'";
        try {
            if (!resolving.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                throw new LockBackendException("no sentinel of " + describe() + " could be asked for the primary for the "
                        + what + " within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms: other calls were"
                        + " asking them; check that the sentinels are running and reachable", lockName, null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("the " + what + " was interrupted while it waited to ask the sentinels of "
                    + describe() + " for the primary; nothing was sent", lockName, e);
        }
        try {
            HostAndPort p = primary;
            long now = System.nanoTime();
            boolean fresh = p != null && (stale != null ? !p.equals(stale) : !suspect);
            if (p != null && (fresh || now - resolvedAt < RESOLVE_INTERVAL_NANOS)) {
                return p; // another call asked since, or one did a moment ago
            }
            HostAndPort found;
            try {
                found = ask(deadline, what, lockName);
            } finally {
                resolvedAt = System.nanoTime(); // failed lookups count too: at most one per interval
            }
            suspect = false;
            if (!found.equals(p)) {
                primary = found;
                if (p != null) {
                    LOG.info("dlock: the sentinels of {} name {} as the primary now (was {})", describe(), found, p);
                    onSwitch.run();
                }
            }
            return found;
        } finally {
            resolving.unlock();
        }
    }

    /** Asks the sentinels in turn, the last good one first, each with its share of what is left. */
    private HostAndPort ask(long deadline, String what, String lockName) {
        List<BackendUri.HostPort> sentinels = settings.hosts;
        int n = sentinels.size();
        int first = lastGood;
        List<String> failures = new ArrayList<>();
        int unknownName = 0;
        Kind configKind = null;
        int configFailures = 0;
        for (int i = 0; i < n; i++) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                failures.add("no time left for the other sentinels");
                break;
            }
            int index = (first + i) % n;
            BackendUri.HostPort s = sentinels.get(index);
            long share = Math.max(TimeUnit.MILLISECONDS.toNanos(MIN_SENTINEL_MILLIS), left / (n - i));
            int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(Math.min(left, share))));
            String name = UriReader.authority(s);
            try {
                HostAndPort found = askOne(s, millis);
                if (found == null) {
                    unknownName++;
                    failures.add(name + ": knows no primary named '" + settings.masterName + "'");
                    continue;
                }
                lastGood = index;
                return found;
            } catch (RuntimeException e) {
                Kind kind = configKind(e);
                if (kind != null) {
                    configFailures++;
                    configKind = configKind == null ? kind : configKind;
                }
                failures.add(name + ": " + detail(e));
            }
        }
        String list = String.join("; ", failures);
        if (unknownName > 0 && unknownName + configFailures == n) {
            throw new LockConfigurationException(Kind.MISSING_RESOURCE, "the sentinels of " + describe() + " know no"
                    + " primary named '" + settings.masterName + "' (" + list + ") for the " + what + ": check the master"
                    + " name, the path of the uri, against the sentinels' configuration (SENTINEL MASTERS)", lockName, null);
        }
        if (configFailures == n) {
            throw new LockConfigurationException(configKind, "no sentinel of " + describe() + " would answer for the "
                    + what + " (" + list + "): check the uri parameters sentinelUser and sentinelPassword, and with "
                    + "rediss-sentinel:// the sentinels' TLS", lockName, null);
        }
        throw new LockBackendException("no sentinel of " + describe() + " named the primary '" + settings.masterName
                + "' for the " + what + " (" + list + "): check that the sentinels are running and reachable", lockName,
                null);
    }

    /** One sentinel's answer: the primary's address, or null if it knows no primary of that name. */
    private HostAndPort askOne(BackendUri.HostPort sentinel, int millis) {
        HostAndPort address = new HostAndPort(sentinel.host(), sentinel.port());
        DefaultJedisClientConfig.Builder b = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(millis)
                .socketTimeoutMillis(millis)
                .clientName("dlock")
                .clientSetInfoConfig(ClientSetInfoConfig.DISABLED);
        if (settings.sentinelPassword != null) {
            b.user(settings.sentinelUser).password(settings.sentinelPassword);
        }
        JedisClientConfig config = b.build();
        try (Connection c = new Connection(new RedisSocketFactory(address, config, settings.tls, sslSocketFactory), config)) {
            Object reply = c.executeCommand(new CommandArguments(Protocol.Command.SENTINEL)
                    .add("GET-MASTER-ADDR-BY-NAME").add(settings.masterName));
            if (reply == null) {
                return null;
            }
            if (reply instanceof List<?> l && l.size() == 2 && l.get(0) instanceof byte[] host
                    && l.get(1) instanceof byte[] port) {
                String p = new String(port, StandardCharsets.US_ASCII);
                if (p.matches("[0-9]{1,5}")) {
                    return new HostAndPort(new String(host, StandardCharsets.UTF_8), Integer.parseInt(p));
                }
            }
            throw new JedisDataException("ERR unexpected answer to SENTINEL GET-MASTER-ADDR-BY-NAME: "
                    + (reply instanceof List<?> l ? "a list of " + l.size() : reply.getClass().getSimpleName()));
        }
    }

    /** The kind of a sentinel's refusal that every retry meets too, or null for a passing failure. */
    private static Kind configKind(Throwable e) {
        if (RedisConnections.hasCause(e, RedisSocketFactory.NotRedisException.class)) {
            return Kind.INCOMPATIBLE_SERVER;
        }
        if (RedisConnections.tlsRefusal(e)) {
            return Kind.TLS;
        }
        String code = RedisConnections.errorCode(e);
        if ("NOPERM".equals(code)) {
            return Kind.PERMISSION;
        }
        if (e instanceof JedisAccessControlException || "NOAUTH".equals(code) || "WRONGPASS".equals(code)
                || "ERR".equals(code) && String.valueOf(e.getMessage()).contains("AUTH")) {
            return Kind.CREDENTIALS;
        }
        if (e instanceof JedisDataException && !"LOADING".equals(code) && !"BUSY".equals(code)) {
            // ERR unknown command 'SENTINEL' (a data node, not a sentinel), an ACL refusal as ERR, ...
            return Kind.INCOMPATIBLE_SERVER;
        }
        return null;
    }

    /** A failure's innermost message, without the URI's secrets (the sentinel password included). */
    private String detail(Throwable e) {
        String text = null;
        for (Throwable t : RedisConnections.chain(e)) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) {
                text = t.getClass().getSimpleName() + ": " + t.getMessage();
            }
        }
        return settings.uri.scrub(text == null ? e.getClass().getSimpleName() : text);
    }

    /** How messages name the deployment: {@code 'mymaster' (sentinels a:26379, b:26379)}. */
    private String describe() {
        List<String> names = new ArrayList<>();
        for (BackendUri.HostPort h : settings.hosts) {
            names.add(UriReader.authority(h));
        }
        return "'" + settings.masterName + "' (sentinels " + String.join(", ", names) + ")";
    }

    /** The connections of one primary address, made on first use. */
    private RedisConnections node(HostAndPort address) {
        RedisConnections c = nodes.computeIfAbsent(address, a -> {
            RedisSettings node = settings.forNode(a.getHost(), a.getPort());
            return new RedisConnections(node, millis -> {
                JedisClientConfig config = RedisLockBackend.clientConfig(node, millis);
                return new RedisConnections.Setup(config, new RedisSocketFactory(a, config, node.tls, sslSocketFactory),
                        connection -> checkPrimary(connection, !settings.lockDelay.isZero()));
            }, operationTimeout);
        });
        if (closed) {
            close();
        }
        return c;
    }

    /**
     * Refuses a new connection to a server that says it is not the primary (the sentinels' answer
     * may be a moment old), as a replica's refusal, so that the call asks the sentinels again.
     * A user who may not run {@code ROLE} passes: a replica still refuses the scripts' writes.
     *
     * <p>With the lock-delay, also refuses a user who may not run {@code INFO}: the acquire script
     * then cannot read the server's run id, so a promoted replica would not start a lock-delay
     * and {@code SURVIVES_SERVER_FAILOVER} would be false. Failing closed, with the remedy.
     */
    private static void checkPrimary(Connection c, boolean lockDelay) {
        if (lockDelay) {
            try {
                c.executeCommand(new CommandArguments(Protocol.Command.INFO).add("server"));
            } catch (JedisDataException e) {
                if ("NOPERM".equals(RedisConnections.errorCode(e))) {
                    throw new JedisAccessControlException("NOPERM the Redis user may not run INFO, which Sentinel mode"
                            + " with a lock-delay needs to tell a promoted replica by its run id: grant it +info, or set"
                            + " lockDelay=0, which gives up surviving a failover");
                }
                throw e;
            }
        }
        Object role;
        try {
            role = c.executeCommand(new CommandArguments(Protocol.Command.ROLE));
        } catch (JedisDataException e) {
            if ("NOPERM".equals(RedisConnections.errorCode(e))) {
                return;
            }
            throw e;
        }
        if (role instanceof List<?> l && !l.isEmpty() && l.get(0) instanceof byte[] b) {
            String r = new String(b, StandardCharsets.US_ASCII);
            if (r.equals("master")) {
                return;
            }
            throw new JedisDataException("READONLY the server is not the primary: ROLE says " + r);
        }
        throw new JedisDataException("ERR unexpected answer to ROLE");
    }

    /** Closes the connections of every primary seen. Never throws. */
    @Override
    public void close() {
        closed = true;
        for (RedisConnections c : nodes.values()) {
            c.close();
        }
    }

    @Override
    public String toString() {
        return "SentinelConnections{" + describe() + ", primary " + primary + "}";
    }
}
