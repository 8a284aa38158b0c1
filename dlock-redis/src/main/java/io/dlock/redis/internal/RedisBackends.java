package io.dlock.redis.internal;

import io.dlock.spi.BackendContext;
import io.dlock.spi.LockBackend;
import java.net.InetSocketAddress;
import java.util.Set;
import java.util.function.UnaryOperator;
import javax.net.ssl.SSLSocketFactory;

/**
 * Opens the backend a dlock-redis URI's scheme asks for. Public only so that
 * {@code io.dlock.redis.RedisLockProvider} can call it; not an API.
 */
public final class RedisBackends {

    /** Every scheme dlock-redis serves: one primary, Sentinel, Cluster and Redlock, each plain and TLS. */
    public static final Set<String> SCHEMES = RedisSettings.SCHEMES;

    private RedisBackends() {
    }

    /**
     * Opens a backend for one client; no I/O.
     *
     * @param context the client's URI, timeouts and thread factory
     * @param sslSocketFactory the socket factory for the TLS schemes, or null for the JVM default
     * @return the backend
     * @throws IllegalArgumentException if the URI is not valid for its mode, naming the part
     */
    public static LockBackend<?> open(BackendContext context, SSLSocketFactory sslSocketFactory) {
        return open(context, sslSocketFactory, UnaryOperator.identity());
    }

    /**
     * {@link #open(BackendContext, SSLSocketFactory)}, connecting to the node addresses a Redis
     * Cluster names through a map (NAT, or a test's proxies); other modes ignore it.
     *
     * @param context the client's URI, timeouts and thread factory
     * @param sslSocketFactory the socket factory for the TLS schemes, or null for the JVM default
     * @param addressMap from an address a cluster names to the address to connect to
     * @return the backend
     * @throws IllegalArgumentException if the URI is not valid for its mode, naming the part
     */
    public static LockBackend<?> open(BackendContext context, SSLSocketFactory sslSocketFactory,
                                      UnaryOperator<InetSocketAddress> addressMap) {
        RedisSettings settings = RedisSettings.from(context.uri(), context.config().defaultLockOptions().leaseTime());
        return switch (settings.mode) {
            case STANDALONE -> RedisLockBackend.open(context, settings, sslSocketFactory);
            case SENTINEL -> SentinelConnections.open(context, settings, sslSocketFactory);
            case CLUSTER -> ClusterConnections.openBackend(context, settings, sslSocketFactory, addressMap);
            case REDLOCK -> RedlockBackend.open(context, settings, sslSocketFactory);
        };
    }
}
