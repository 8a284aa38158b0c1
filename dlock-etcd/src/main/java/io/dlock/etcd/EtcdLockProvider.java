package io.dlock.etcd;

import io.dlock.Capability;
import io.dlock.etcd.internal.EtcdLockBackend;
import io.dlock.spi.BackendContext;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import io.dlock.spi.support.AbstractLockProvider;
import io.dlock.spi.support.Arguments;
import java.util.Set;
import javax.net.ssl.TrustManagerFactory;

/**
 * The etcd {@link LockProvider}: handles {@code etcd://} and {@code etcds://} (TLS) URIs. Found by
 * {@link java.util.ServiceLoader}; it can also be passed to
 * {@link io.dlock.LockClient#open(io.dlock.LockClientConfig, LockProvider)} explicitly, for
 * instance when TLS needs a trust store that is neither the JVM's default nor a PEM file:
 *
 * <pre>{@code
 * LockClient client = LockClient.open(LockClientConfig.builder("etcds://etcd-1:2379,etcd-2:2379").build(),
 *         EtcdLockProvider.withTrustManagerFactory(trustManagerFactory));
 * }</pre>
 *
 * <p>The backend declares {@link Capability#FENCING}, {@link Capability#NOTIFY_WAITERS},
 * {@link Capability#FAIR}, {@link Capability#HOLDER_QUERY} and
 * {@link Capability#SURVIVES_SERVER_FAILOVER}. Immutable and thread-safe. See the package
 * documentation for the URI, the keys it writes and its guarantees.
 */
public final class EtcdLockProvider extends AbstractLockProvider {

    private final TrustManagerFactory trust;

    /** Creates the provider with the JVM's default TLS trust; {@link java.util.ServiceLoader} uses this. */
    public EtcdLockProvider() {
        this(null);
    }

    private EtcdLockProvider(TrustManagerFactory trust) {
        super("etcd", Set.of("etcd", "etcds"), trust == null ? null : "custom TLS trust");
        this.trust = trust;
    }

    /**
     * Returns a provider whose {@code etcds://} connections trust the given trust managers (for a
     * private certificate authority), instead of the {@code caFile} URI parameter or the JVM's
     * default. Host names are still verified against the servers' certificates.
     *
     * @param trust an initialised trust manager factory
     * @return the provider
     * @throws IllegalArgumentException if {@code trust} is null
     */
    public static EtcdLockProvider withTrustManagerFactory(TrustManagerFactory trust) {
        return new EtcdLockProvider(Arguments.notNull("trust", trust));
    }

    /**
     * Opens a backend for one client. No I/O: the connection is made on first use.
     *
     * @param context the client's URI, timeouts, clocks, thread factory and event sink
     * @return the backend
     * @throws IllegalArgumentException if the URI is not a valid {@code etcd://} or {@code etcds://}
     *     URI; the message names the part and never shows the password
     */
    @Override
    protected LockBackend<?> openBackend(BackendContext context) {
        return EtcdLockBackend.open(context, trust);
    }
}
