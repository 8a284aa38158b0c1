package io.dlock.redis.internal;

import io.dlock.spi.support.LeaseTimes;
import io.dlock.Capability;
import io.dlock.LockBackendException;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.LockHolder;
import io.dlock.spi.support.Ids;
import io.dlock.spi.support.RetryingCleaner;
import io.dlock.spi.support.RetryingCleaner.Outcome;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.RenewOutcome;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocketFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;

/**
 * The Redis {@link LockBackend} of one primary ({@code redis://}), of the primary the sentinels
 * name and of a Redis Cluster: Lua scripts run through a {@link ScriptRunner}, and one pub/sub
 * connection for waiters. Opened by {@link RedisBackends}.
 *
 * <p>Every call ends within about the operation timeout: borrowing a connection, the read timeout
 * and a single retry after a fast connection failure all share it. Thread-safe.
 */
final class RedisLockBackend implements LockBackend<Void> {

    private static final Logger LOG = LoggerFactory.getLogger(RedisLockBackend.class);

    /** The most leases one renewal script call carries; longer lists take several calls. */
    static final int RENEW_BATCH = 512;

    private final RedisSettings settings;
    private final Keys keys;
    private final ScriptRunner connections;
    private final ReleaseSubscriber subscriber;
    private final long timeoutNanos;
    private final long abandonNanos;
    private final String lockDelayMillis;
    private final RetryingCleaner cleaner;
    /** The marker time of the last lock-delay this client logged, so that each is logged once. */
    private volatile String loggedLockDelay;

    /**
     * @param context the client's context
     * @param settings the URI's settings
     * @param connections where scripts run; closed with the backend
     * @param subscriber the waiters' pub/sub connection; closed with the backend
     */
    RedisLockBackend(BackendContext context, RedisSettings settings, Keys keys, ScriptRunner connections,
                     ReleaseSubscriber subscriber) {
        this.settings = settings;
        this.keys = keys;
        this.timeoutNanos = LeaseTimes.saturatedNanos(context.operationTimeout());
        this.lockDelayMillis = settings.lockDelay.isZero() ? "0" : Long.toString(LeaseTimes.ceilMillis(settings.lockDelay));
        // undoing a lost grant is a courtesy (the key expires anyway): do not double the caller's wait
        this.abandonNanos = LeaseTimes.abandonBudget(context.operationTimeout(), Duration.ofMillis(50)).toNanos();
        this.connections = connections;
        this.subscriber = subscriber;
        this.cleaner = RetryingCleaner.start("Redis", context.threadFactory(), RetryingCleaner.Settings.defaults());
    }

    /**
     * Opens a backend for one client; no I/O.
     *
     * @param context the client's URI, timeouts and thread factory
     * @param settings the URI's settings
     * @param sslSocketFactory the socket factory for {@code rediss://}, or null for the JVM default
     * @return the backend
     */
    static RedisLockBackend open(BackendContext context, RedisSettings settings, SSLSocketFactory sslSocketFactory) {
        Keys keys = new Keys(settings.prefix);
        HostAndPort address = new HostAndPort(settings.host, settings.port);
        RedisConnections connections = new RedisConnections(settings, millis -> {
            JedisClientConfig config = clientConfig(settings, millis);
            return new RedisConnections.Setup(config, new RedisSocketFactory(address, config, settings.tls, sslSocketFactory));
        }, context.operationTimeout());
        return new RedisLockBackend(context, settings, keys, connections,
                subscriber(context, settings, keys, new RedisSocketFactory(address, clientConfig(settings,
                        timeoutMillis(context)), settings.tls, sslSocketFactory)));
    }

    /** The operation timeout in ms, for jedis's int timeouts. */
    static int timeoutMillis(BackendContext context) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, context.operationTimeout().toMillis()));
    }

    /**
     * The waiters' pub/sub connection, made through a socket factory (which may find its server
     * anew at each connect).
     */
    static ReleaseSubscriber subscriber(BackendContext context, RedisSettings settings, Keys keys,
                                        RedisSocketFactory socketFactory) {
        return new ReleaseSubscriber(settings, clientConfig(settings, timeoutMillis(context)), socketFactory,
                context.threadFactory(), keys.control(Ids.randomHex(8)), context.operationTimeout().toMillis() + 1000);
    }

    /** The jedis configuration: TLS is not set here, {@link RedisSocketFactory} does it. */
    static JedisClientConfig clientConfig(RedisSettings settings, int millis) {
        DefaultJedisClientConfig.Builder b = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(millis)
                .socketTimeoutMillis(millis)
                .blockingSocketTimeoutMillis(0)
                .database(settings.database)
                .clientName("dlock")
                .clientSetInfoConfig(ClientSetInfoConfig.DISABLED);
        if (settings.password != null) {
            b.user(settings.user).password(settings.password);
        }
        return b.build();
    }

    Keys keys() {
        return keys;
    }

    ReleaseSubscriber subscriber() {
        return subscriber;
    }

    /**
     * @return {@code FENCING}, {@code NOTIFY_WAITERS}, {@code HOLDER_QUERY}, and, unless the URI
     *     turns the lock-delay off ({@code lockDelay=0}), {@code SURVIVES_EMPTY_RESTART}, and in
     *     Sentinel and Redis Cluster modes also {@code SURVIVES_SERVER_FAILOVER}
     */
    @Override
    public Set<Capability> capabilities() {
        return settings.capabilities();
    }

    /** @return 10 ms: Redis expires keys to the millisecond, the rest is the core's margin */
    @Override
    public Duration minimumLeaseTime() {
        return Duration.ofMillis(10);
    }

    /**
     * The longest lease: the lock-delay, so that a lease granted before the server lost its data
     * has ended by the time the lock-delay lets anyone in; 365 days when the lock-delay is off.
     *
     * @return the URI's {@code lockDelay}, by default the longer of 30 s and the client's default lease
     */
    @Override
    public Duration maximumLeaseTime() {
        return settings.maximumLeaseTime();
    }

    /**
     * Starts an acquisition; no I/O.
     *
     * @param request the name, owner id and lease time
     * @return the attempt
     * @throws IllegalArgumentException if the lease is longer than {@link #maximumLeaseTime()}
     */
    @Override
    public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
        settings.checkLease(request.leaseTime());
        return new RedisAttempt(this, request);
    }


    /** One run of the acquire script; see {@link Script#ACQUIRE}. */
    AttemptResult<Void> acquire(AcquireRequest request) {
        String name = request.name();
        Object reply = connections.eval(Script.ACQUIRE, List.of(keys.lock(name), keys.fence(name), keys.epoch(name)),
                List.of(request.ownerId(), Long.toString(LeaseTimes.ceilMillis(request.leaseTime())), lockDelayMillis), "acquire",
                name, timeoutNanos, RedisLockBackend::granted);
        if (reply instanceof List<?> list && list.size() >= 2 && list.get(0) instanceof Long code) {
            if (code == 1L && list.size() == 2) {
                long token = parseToken(list.get(1));
                if (token > 0) {
                    return AttemptResult.granted(token, null); // the key's value is derived: ownerId:token
                }
            } else if (code == 0L && list.size() == 2 && list.get(1) instanceof Long pttl) {
                return pttl > 0 ? AttemptResult.busy(Duration.ofMillis(pttl)) : AttemptResult.busy();
            } else if (code == 2L && list.size() == 4 && list.get(1) instanceof Long left && left > 0
                    && list.get(3) instanceof Long runKnown) {
                lockDelayed(name, list.get(2), Duration.ofMillis(left), runKnown == 1L);
                return AttemptResult.busy(Duration.ofMillis(left));
            }
        }
        throw unexpected("acquire", name, reply);
    }

    /**
     * Logs, once per lock-delay (told apart by its marker's time), that the server refuses grants:
     * an operator should know that it lost its data or restarted, and why nobody gets a lock.
     */
    private void lockDelayed(String name, Object markerTime, Duration left, boolean runKnown) {
        String at = markerTime instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(markerTime);
        if (at.equals(loggedLockDelay)) {
            return;
        }
        loggedLockDelay = at;
        LOG.warn("dlock: {} grants no lock for another {} ms (lock-delay {}): its lock-delay marker '{}' was missing or "
                + "written by another server process, so the server lost its data or restarted since (a restart "
                + "without persistence or from an old snapshot, a failover, a flush), or this prefix is used for the "
                + "first time; a lease granted before that may still be valid until the lock-delay has passed{}",
                settings.server(), left.toMillis(), settings.lockDelay, keys.epoch(name), runKnown ? ""
                        : "; the Redis user may not run INFO, so only a missing marker starts a lock-delay, "
                        + "not a restart from an old snapshot or a failover");
    }

    private static boolean granted(Object reply) {
        return reply instanceof List<?> list && !list.isEmpty() && Long.valueOf(1L).equals(list.get(0));
    }

    /**
     * Deletes the key if this attempt's owner holds it: undoes a grant whose answer was lost.
     * Tries once, briefly; if that fails (while answers are lost, a new connection's set-up is never
     * answered, so it usually does), keeps trying in the background for the lease time, after
     * which the key has expired. Never throws.
     */
    void abandon(AcquireRequest request) {
        if (!tryAbandon(request)) {
            cleaner.submit(request, () -> tryAbandon(request) ? Outcome.DONE : Outcome.RETRY, request.leaseTime());
        }
    }

    /** @return true if the server answered the owner-checked delete, false if the call failed */
    private boolean tryAbandon(AcquireRequest request) {
        String name = request.name();
        try {
            connections.eval(Script.ABANDON, List.of(keys.lock(name)), List.of(request.ownerId(), keys.released(name)),
                    "clean-up after a failed acquire", name, abandonNanos);
            return true;
        } catch (LockBackendException e) {
            LOG.debug("dlock: could not undo a possible grant of lock '{}' yet", name, e);
            return false;
        }
    }

    /**
     * Renews leases, many per script call. A script call that fails makes its own leases'
     * outcomes unknown; the leases of the calls that answered keep their answers.
     *
     * @param grants the grants
     * @return per grant, in order: renewed, not held, or unknown (its script call failed)
     * @throws IllegalArgumentException if a lease is longer than {@link #maximumLeaseTime()}
     */
    @Override
    public List<RenewOutcome> renew(List<Grant<Void>> grants) {
        for (Grant<Void> grant : grants) {
            settings.checkLease(grant.leaseTime());
        }
        RenewOutcome[] out = new RenewOutcome[grants.size()];
        // one script call carries only leases of one shard (Redis Cluster: one hash slot)
        Map<Integer, List<Integer>> byShard = new LinkedHashMap<>();
        for (int i = 0; i < grants.size(); i++) {
            byShard.computeIfAbsent(connections.shard(grants.get(i).name()), k -> new ArrayList<>()).add(i);
        }
        for (List<Integer> shard : byShard.values()) {
            for (int from = 0; from < shard.size(); from += RENEW_BATCH) {
                List<Integer> indexes = shard.subList(from, Math.min(shard.size(), from + RENEW_BATCH));
                List<Grant<Void>> batch = new ArrayList<>(indexes.size());
                for (int i : indexes) {
                    batch.add(grants.get(i));
                }
                List<RenewOutcome> answers;
                try {
                    answers = renewBatch(batch);
                } catch (LockBackendException e) {
                    answers = Collections.nCopies(batch.size(), RenewOutcome.unknown(e));
                }
                for (int j = 0; j < indexes.size(); j++) {
                    out[indexes.get(j)] = answers.get(j);
                }
            }
        }
        return List.of(out);
    }

    /** One renewal script call; throws if its outcome is unknown. */
    private List<RenewOutcome> renewBatch(List<Grant<Void>> batch) {
        List<String> lockKeys = new ArrayList<>(batch.size());
        List<String> args = new ArrayList<>(batch.size() * 2);
        for (Grant<Void> grant : batch) {
            lockKeys.add(keys.lock(grant.name()));
            args.add(expectedValue(grant));
        }
        for (Grant<Void> grant : batch) {
            args.add(Long.toString(LeaseTimes.ceilMillis(grant.leaseTime())));
        }
        String lockName = batch.size() == 1 ? batch.get(0).name() : null;
        String operation = batch.size() == 1 ? "renewal" : "renewal of " + batch.size() + " leases";
        Object reply = connections.eval(Script.RENEW, lockKeys, args, operation, lockName, timeoutNanos,
                r -> r instanceof List<?> l && l.contains(1L));
        if (!(reply instanceof List<?> list) || list.size() != batch.size()) {
            throw unexpected(operation, lockName, reply);
        }
        List<RenewOutcome> out = new ArrayList<>(batch.size());
        for (Object answer : list) {
            out.add(Long.valueOf(1L).equals(answer) ? RenewOutcome.renewed() : RenewOutcome.notHeld());
        }
        return out;
    }

    /**
     * Releases a lease if its owner still holds it, and notifies waiters. A release that gets no
     * answer is retried in the background until the lease has ended.
     *
     * @param grant the grant
     * @return released, or not held
     * @throws LockBackendException if the outcome is unknown
     */
    @Override
    public ReleaseOutcome release(Grant<Void> grant) {
        String name = grant.name();
        Object reply;
        try {
            reply = releaseOnce(grant, timeoutNanos);
        } catch (LockBackendException e) {
            // owner-checked, so safe to repeat: retried in the background until the lease has ended
            if (e.retryable()) {
                cleaner.submit(grant, () -> {
                    releaseOnce(grant, abandonNanos);
                    return Outcome.DONE;
                }, grant.leaseTime());
            }
            throw e;
        }
        if (reply instanceof Long n) {
            return n == 1L ? ReleaseOutcome.RELEASED : ReleaseOutcome.NOT_HELD;
        }
        throw unexpected("release", name, reply);
    }

    private Object releaseOnce(Grant<Void> grant, long budgetNanos) {
        String name = grant.name();
        return connections.eval(Script.RELEASE, List.of(keys.lock(name)),
                List.of(expectedValue(grant), keys.released(name)), "release", name, budgetNanos);
    }

    /**
     * Tells who holds a lock: the owner id and token stored in its key, and the key's expiry.
     *
     * @param name the lock
     * @return the holder, or empty if the lock is free
     * @throws LockBackendException if Redis fails or does not answer in time
     */
    @Override
    public Optional<LockHolder> holder(String name) {
        Object reply = connections.eval(Script.HOLDER, List.of(keys.lock(name)), List.of(), "holder query", name,
                timeoutNanos);
        if (reply instanceof List<?> list) {
            if (list.isEmpty()) {
                return Optional.empty();
            }
            if (list.size() == 2 && list.get(0) instanceof byte[] raw && list.get(1) instanceof Long pttl) {
                String value = new String(raw, StandardCharsets.UTF_8);
                int colon = value.indexOf(':');
                long token = colon > 0 ? parseToken(value.substring(colon + 1)) : -1;
                if (token > 0) {
                    return Optional.of(new LockHolder(name, value.substring(0, colon), token,
                            pttl >= 0 ? Duration.ofMillis(pttl) : null));
                }
                throw new LockConfigurationException(Kind.INCOMPATIBLE_SERVER, "the key of lock '" + name
                        + "' on " + settings.server() + " holds a value dlock did not write: check that no other"
                        + " application uses the key prefix '" + settings.prefix + "'", name, null);
            }
        }
        throw unexpected("holder query", name, reply);
    }

    /** The value a grant's key holds while its owner holds it. */
    private static String expectedValue(Grant<Void> grant) {
        return Keys.value(grant.ownerId(), grant.fencingToken());
    }

    private static long parseToken(Object raw) {
        String s = raw instanceof byte[] b ? new String(b, StandardCharsets.UTF_8)
                : raw instanceof String str ? str : raw instanceof Long l ? Long.toString(l) : null;
        if (s == null || s.isEmpty() || s.length() > 19) {
            return -1;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return -1;
            }
        }
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** A reply dlock's scripts never give: another application's data under the prefix, or not a Redis dlock can use. */
    private LockBackendException unexpected(String operation, String lockName, Object reply) {
        String what = lockName == null ? operation : operation + " of lock '" + lockName + "'";
        return new LockConfigurationException(Kind.INCOMPATIBLE_SERVER, settings.server()
                + " gave an unexpected answer to the " + what + " (" + describe(reply) + "): check that no other"
                + " application uses the key prefix '" + settings.prefix + "' and that the server is a Redis 3.2 or"
                + " later", lockName, null);
    }

    private static String describe(Object reply) {
        if (reply == null) {
            return "nil";
        }
        if (reply instanceof List<?> list) {
            return "a list of " + list.size();
        }
        return reply.getClass().getSimpleName();
    }

    /** Stops the pub/sub thread and closes every connection. Never throws. */
    @Override
    public void close() {
        try {
            cleaner.close();
            subscriber.close();
        } finally {
            connections.close();
        }
    }

    @Override
    public String toString() {
        return "RedisLockBackend{" + settings + "}";
    }
}
