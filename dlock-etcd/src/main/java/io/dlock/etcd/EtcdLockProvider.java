package io.dlock.etcd;

import io.dlock.spi.support.Arguments;
import io.dlock.Capability;
import io.dlock.etcd.internal.EtcdLockBackend;
import io.dlock.spi.BackendContext;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
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
 * {@link Capability#SURVIVES_SERVER_FAILOVER}. Stateless and thread-safe. See the package
 * documentation for the URI, the keys it writes and its guarantees.
 */
public final class EtcdLockProvider implements LockProvider {

    private static final Set<String> SCHEMES = Set.of("etcd", "etcds");

    private final TrustManagerFactory trust;

    /** Creates the provider with the JVM's default TLS trust; {@link java.util.ServiceLoader} uses this. */
    public EtcdLockProvider() {
        this.trust = null;
    }

    private EtcdLockProvider(TrustManagerFactory trust) {
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
        if (trust == null) {
            throw new IllegalArgumentException("trust must not be null");
        }
        return new EtcdLockProvider(trust);
    }

    /** @return {@code etcd} */
    @Override
    public String name() {
        return "etcd";
    }

    /** @return {@code etcd} and {@code etcds} */
    @Override
    public Set<String> schemes() {
        return SCHEMES;
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
    public LockBackend<?> open(BackendContext context) {
        Arguments.notNull("context", context);
        return EtcdLockBackend.open(context, trust);
    }

    @Override
    public String toString() {
        return "EtcdLockProvider" + (trust == null ? "" : "{custom TLS trust}");
    }
}
