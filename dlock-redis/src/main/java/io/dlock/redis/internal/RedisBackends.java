package io.dlock.redis.internal;

import io.dlock.spi.BackendContext;
import io.dlock.spi.LockBackend;
import java.util.Set;
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
        RedisSettings settings = RedisSettings.from(context.uri(), context.config().defaultLockOptions().leaseTime());
        return switch (settings.mode) {
            case STANDALONE -> RedisLockBackend.open(context, settings, sslSocketFactory);
            case SENTINEL -> SentinelConnections.open(context, settings, sslSocketFactory);
            case CLUSTER, REDLOCK -> throw new IllegalArgumentException("uri scheme "
                    + context.uri().scheme() + " is not served by this build of dlock-redis yet");
        };
    }
}
