package io.dlock.redis;

import io.dlock.spi.support.Arguments;
import io.dlock.Capability;
import io.dlock.redis.internal.RedisLockBackend;
import io.dlock.spi.BackendContext;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import java.util.Set;
import javax.net.ssl.SSLSocketFactory;

/**
 * The Redis {@link LockProvider}: handles {@code redis://} and {@code rediss://} (TLS) URIs.
 * Found by {@link java.util.ServiceLoader}; it can also be passed to
 * {@link io.dlock.LockClient#open(io.dlock.LockClientConfig, LockProvider)} explicitly, for
 * instance when TLS needs a trust store other than the JVM's default:
 *
 * <pre>{@code
 * LockClient client = LockClient.open(LockClientConfig.builder("rediss://redis-1:6380").build(),
 *         RedisLockProvider.withSslSocketFactory(sslContext.getSocketFactory()));
 * }</pre>
 *
 * <p>The backend declares {@link Capability#FENCING}, {@link Capability#NOTIFY_WAITERS},
 * {@link Capability#HOLDER_QUERY} and, unless the URI sets {@code lockDelay=0},
 * {@link Capability#SURVIVES_EMPTY_RESTART}. Stateless and thread-safe. See the package
 * documentation for the URI, the keys it writes, the lock-delay and its guarantees.
 */
public final class RedisLockProvider implements LockProvider {

    private static final Set<String> SCHEMES = Set.of("redis", "rediss");

    private final SSLSocketFactory sslSocketFactory;

    /** Creates the provider with the JVM's default TLS settings; {@link java.util.ServiceLoader} uses this. */
    public RedisLockProvider() {
        this.sslSocketFactory = null;
    }

    private RedisLockProvider(SSLSocketFactory sslSocketFactory) {
        this.sslSocketFactory = sslSocketFactory;
    }

    /**
     * Returns a provider whose {@code rediss://} connections use the given socket factory (for a
     * private certificate authority or client certificates). Host names are still verified.
     *
     * @param sslSocketFactory the factory, e.g. {@code sslContext.getSocketFactory()}
     * @return the provider
     * @throws IllegalArgumentException if {@code sslSocketFactory} is null
     */
    public static RedisLockProvider withSslSocketFactory(SSLSocketFactory sslSocketFactory) {
        if (sslSocketFactory == null) {
            throw new IllegalArgumentException("sslSocketFactory must not be null");
        }
        return new RedisLockProvider(sslSocketFactory);
    }

    /** @return {@code redis} */
    @Override
    public String name() {
        return "redis";
    }

    /** @return {@code redis} and {@code rediss} */
    @Override
    public Set<String> schemes() {
        return SCHEMES;
    }

    /**
     * Opens a backend for one client. No I/O: connections are made on first use.
     *
     * @param context the client's URI, timeouts and thread factory
     * @return the backend
     * @throws IllegalArgumentException if the URI is not a valid {@code redis://} or
     *     {@code rediss://} URI; the message names the part and never shows the password
     */
    @Override
    public LockBackend<?> open(BackendContext context) {
        Arguments.notNull("context", context);
        return RedisLockBackend.open(context, sslSocketFactory);
    }

    @Override
    public String toString() {
        return "RedisLockProvider" + (sslSocketFactory == null ? "" : "{custom TLS}");
    }
}
