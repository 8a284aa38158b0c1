package io.dlock.redis.internal;

import io.dlock.Capability;
import io.dlock.LockBackendException;
import io.dlock.LockHolder;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.HeldLock;
import io.dlock.spi.LockBackend;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
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
 * The Redis {@link LockBackend}: Lua scripts over a pool of connections, and one pub/sub
 * connection for waiters. Public only so that {@code io.dlock.redis.RedisLockProvider} can open
 * it; not an API.
 *
 * <p>Every call ends within about the operation timeout: borrowing a connection, the read timeout
 * and a single retry after a fast connection failure all share it. Thread-safe.
 */
public final class RedisLockBackend implements LockBackend {

    private static final Logger LOG = LoggerFactory.getLogger(RedisLockBackend.class);

    private static final Set<Capability> CAPABILITIES = Collections.unmodifiableSet(
            EnumSet.of(Capability.FENCING, Capability.NOTIFY_WAITERS, Capability.HOLDER_QUERY));

    /** The most leases one renewal script call carries; longer lists take several calls. */
    static final int RENEW_BATCH = 512;

    private static final SecureRandom RANDOM = new SecureRandom();

    private final RedisSettings settings;
    private final Keys keys;
    private final RedisConnections connections;
    private final ReleaseSubscriber subscriber;
    private final long timeoutNanos;
    private final long abandonNanos;
    private final BackgroundAbandon backgroundAbandon;

    private RedisLockBackend(BackendContext context, RedisSettings settings, SSLSocketFactory sslSocketFactory) {
        this.settings = settings;
        this.keys = new Keys(settings.prefix);
        this.timeoutNanos = context.operationTimeout().toNanos();
        // undoing a lost grant is a courtesy (the key expires anyway): do not double the caller's wait
        this.abandonNanos = Math.max(Math.min(timeoutNanos, TimeUnit.MILLISECONDS.toNanos(50)), timeoutNanos / 4);
        int timeoutMillis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, context.operationTimeout().toMillis()));
        JedisClientConfig clientConfig = clientConfig(settings, timeoutMillis);
        HostAndPort address = new HostAndPort(settings.host, settings.port);
        this.connections = new RedisConnections(settings, millis -> {
            JedisClientConfig config = clientConfig(settings, millis);
            return new RedisConnections.Setup(config, new RedisSocketFactory(address, config, settings.tls, sslSocketFactory));
        }, context.operationTimeout());
        this.backgroundAbandon = new BackgroundAbandon(context.threadFactory(), this::tryAbandon);
        this.subscriber = new ReleaseSubscriber(settings, clientConfig,
                new RedisSocketFactory(address, clientConfig, settings.tls, sslSocketFactory), context.threadFactory(),
                keys.control(HexFormat.of().formatHex(randomBytes())),
                TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + 1000);
    }

    /**
     * Opens a backend for one client; no I/O.
     *
     * @param context the client's URI, timeouts and thread factory
     * @param sslSocketFactory the socket factory for {@code rediss://}, or null for the JVM default
     * @return the backend
     * @throws IllegalArgumentException if the URI is not valid for Redis, naming the part
     */
    public static RedisLockBackend open(BackendContext context, SSLSocketFactory sslSocketFactory) {
        return new RedisLockBackend(context, RedisSettings.from(context.uri()), sslSocketFactory);
    }

    /** The jedis configuration: TLS is not set here, {@link RedisSocketFactory} does it. */
    private static JedisClientConfig clientConfig(RedisSettings settings, int millis) {
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

    private static byte[] randomBytes() {
        byte[] b = new byte[8];
        RANDOM.nextBytes(b);
        return b;
    }

    Keys keys() {
        return keys;
    }

    ReleaseSubscriber subscriber() {
        return subscriber;
    }

    /** @return {@code FENCING}, {@code NOTIFY_WAITERS}, {@code HOLDER_QUERY} */
    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    /** @return 10 ms: Redis expires keys to the millisecond, the rest is the core's margin */
    @Override
    public Duration minimumLeaseTime() {
        return Duration.ofMillis(10);
    }

    /**
     * Starts an acquisition; no I/O.
     *
     * @param request the name, owner id and lease time
     * @return the attempt
     */
    @Override
    public AcquireAttempt newAttempt(AcquireRequest request) {
        return new RedisAttempt(this, request);
    }

    /** One run of the acquire script; see {@link Script#ACQUIRE}. */
    AttemptResult acquire(AcquireRequest request) {
        String name = request.name();
        Object reply = connections.eval(Script.ACQUIRE, List.of(keys.lock(name), keys.fence()),
                List.of(request.ownerId(), Long.toString(leaseMillis(request.leaseTime()))), "acquire", name,
                timeoutNanos, RedisLockBackend::granted);
        if (reply instanceof List<?> list && list.size() == 2 && list.get(0) instanceof Long granted) {
            if (granted == 1L) {
                long token = parseToken(list.get(1));
                if (token > 0) {
                    return AttemptResult.granted(token, Keys.value(request.ownerId(), token));
                }
            } else if (granted == 0L && list.get(1) instanceof Long pttl) {
                return pttl > 0 ? AttemptResult.busy(Duration.ofMillis(pttl)) : AttemptResult.busy();
            }
        }
        throw unexpected("acquire", name, reply);
    }

    private static boolean granted(Object reply) {
        return reply instanceof List<?> list && !list.isEmpty() && Long.valueOf(1L).equals(list.get(0));
    }

    /**
     * Deletes the key if this attempt's owner holds it: undoes a grant whose answer was lost.
     * Tries once, briefly; if that fails, keeps trying in the background ({@link BackgroundAbandon}).
     * Never throws.
     */
    void abandon(AcquireRequest request) {
        if (!tryAbandon(request)) {
            backgroundAbandon.add(request);
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
     * Renews leases, many per script call.
     *
     * @param locks the leases
     * @return per lease, whether its owner still held it and it was renewed
     * @throws LockBackendException if the outcome is unknown
     */
    @Override
    public boolean[] renew(List<? extends HeldLock> locks) {
        boolean[] out = new boolean[locks.size()];
        for (int from = 0; from < locks.size(); from += RENEW_BATCH) {
            List<? extends HeldLock> batch = locks.subList(from, Math.min(locks.size(), from + RENEW_BATCH));
            List<String> lockKeys = new ArrayList<>(batch.size());
            List<String> args = new ArrayList<>(batch.size() * 2);
            for (HeldLock lock : batch) {
                lockKeys.add(keys.lock(lock.name()));
                args.add(expectedValue(lock));
            }
            for (HeldLock lock : batch) {
                args.add(Long.toString(leaseMillis(lock.leaseTime())));
            }
            String lockName = batch.size() == 1 ? batch.get(0).name() : null;
            String operation = batch.size() == 1 ? "renewal" : "renewal of " + batch.size() + " leases";
            Object reply = connections.eval(Script.RENEW, lockKeys, args, operation, lockName, timeoutNanos,
                    r -> r instanceof List<?> l && l.contains(1L));
            if (!(reply instanceof List<?> list) || list.size() != batch.size()) {
                throw unexpected(operation, lockName, reply);
            }
            for (int i = 0; i < batch.size(); i++) {
                out[from + i] = Long.valueOf(1L).equals(list.get(i));
            }
        }
        return out;
    }

    /**
     * Releases a lease if its owner still holds it, and notifies waiters.
     *
     * @param lock the lease
     * @return true if this call released it
     * @throws LockBackendException if the outcome is unknown
     */
    @Override
    public boolean release(HeldLock lock) {
        String name = lock.name();
        Object reply = connections.eval(Script.RELEASE, List.of(keys.lock(name)),
                List.of(expectedValue(lock), keys.released(name)), "release", name, timeoutNanos);
        if (reply instanceof Long n) {
            return n == 1L;
        }
        throw unexpected("release", name, reply);
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
                throw new LockBackendException("the key of lock '" + name + "' on " + settings.server()
                        + " holds a value dlock did not write: check that no other application uses the key prefix '"
                        + settings.prefix + "'", name, null);
            }
        }
        throw unexpected("holder query", name, reply);
    }

    private static String expectedValue(HeldLock lock) {
        return lock.backendState() instanceof String value ? value : Keys.value(lock.ownerId(), lock.fencingToken());
    }

    /** Whole milliseconds, rounded up: the server may keep a lock a little longer, never shorter. */
    static long leaseMillis(Duration lease) {
        long ms = lease.toMillis();
        if (lease.minusMillis(ms).isZero()) {
            return Math.max(1, ms);
        }
        return Math.max(1, ms + 1);
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

    private LockBackendException unexpected(String operation, String lockName, Object reply) {
        String what = lockName == null ? operation : operation + " of lock '" + lockName + "'";
        return new LockBackendException(settings.server() + " gave an unexpected answer to the " + what + " ("
                + describe(reply) + "): check that no other application uses the key prefix '" + settings.prefix
                + "' and that the server is a Redis 3.2 or later", lockName, null);
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
            backgroundAbandon.close();
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
