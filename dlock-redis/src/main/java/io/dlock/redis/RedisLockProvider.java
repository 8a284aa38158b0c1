package io.dlock.redis;

import io.dlock.Capability;
import io.dlock.redis.internal.RedisBackends;
import io.dlock.spi.BackendContext;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import io.dlock.spi.support.AbstractLockProvider;
import io.dlock.spi.support.Arguments;
import java.util.Set;
import javax.net.ssl.SSLSocketFactory;

/**
 * The Redis {@link LockProvider}: handles {@code redis://} (one primary), {@code redis-sentinel://},
 * {@code redis-cluster://} and {@code redlock://} URIs, and their TLS forms {@code rediss://},
 * {@code rediss-sentinel://}, {@code rediss-cluster://} and {@code redlocks://}.
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
 * {@link Capability#SURVIVES_EMPTY_RESTART}; in the Sentinel, Cluster and Redlock modes with the
 * lock-delay on also {@link Capability#SURVIVES_SERVER_FAILOVER}, under the assumptions the
 * package documentation states. Immutable and thread-safe. See the package
 * documentation for the URI, the keys it writes, the lock-delay and its guarantees.
 */
public final class RedisLockProvider extends AbstractLockProvider {

    private final SSLSocketFactory sslSocketFactory;

    /** Creates the provider with the JVM's default TLS settings; {@link java.util.ServiceLoader} uses this. */
    public RedisLockProvider() {
        this(null);
    }

    private RedisLockProvider(SSLSocketFactory sslSocketFactory) {
        super("redis", RedisBackends.SCHEMES, sslSocketFactory == null ? null : "custom TLS");
        this.sslSocketFactory = sslSocketFactory;
    }

    /**
     * Returns a provider whose TLS connections (of every TLS scheme: {@code rediss://},
     * {@code rediss-sentinel://}, {@code rediss-cluster://}, {@code redlocks://}) use the given
     * socket factory (for a private certificate authority or client certificates). Host names are
     * still verified.
     *
     * @param sslSocketFactory the factory, e.g. {@code sslContext.getSocketFactory()}
     * @return the provider
     * @throws IllegalArgumentException if {@code sslSocketFactory} is null
     */
    public static RedisLockProvider withSslSocketFactory(SSLSocketFactory sslSocketFactory) {
        return new RedisLockProvider(Arguments.notNull("sslSocketFactory", sslSocketFactory));
    }

    /**
     * Opens a backend for one client. No I/O: connections are made on first use.
     *
     * @param context the client's URI, timeouts and thread factory
     * @return the backend
     * @throws IllegalArgumentException if the URI is not a valid dlock-redis URI of its scheme (see
     *     the class documentation); the message names the part and never shows the password
     */
    @Override
    protected LockBackend<?> openBackend(BackendContext context) {
        return RedisBackends.open(context, sslSocketFactory);
    }
}
