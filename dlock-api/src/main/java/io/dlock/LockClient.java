package io.dlock;

import io.dlock.internal.DefaultLockClient;
import io.dlock.internal.Providers;
import io.dlock.spi.LockProvider;
import java.util.Optional;
import java.util.Set;

/**
 * A connection to one lock backend, and the factory of {@link DistributedLock} handles.
 *
 * <pre>{@code
 * try (LockClient client = LockClient.open("redis://127.0.0.1:6379")) {
 *     DistributedLock lock = client.lock("payment:order-42");
 *     try (Lease lease = lock.tryAcquire(Duration.ofSeconds(2)).orElseThrow()) {
 *         ledger.write(order, lease.fencingToken());
 *     }
 * }
 * }</pre>
 *
 * <p>The backend is chosen by the URI's scheme, among the {@link LockProvider}s found on the
 * classpath through {@link java.util.ServiceLoader}: put {@code dlock-redis} on the classpath and
 * open a {@code redis://} URI, swap it for {@code dlock-etcd} and an {@code etcd://} URI, and no
 * code changes.
 *
 * <p>A client is thread-safe and meant to be shared by the whole application: each client is one
 * participant (one session) towards the backend, and threads that share it exclude each other
 * as any two clients do. Locks are not reentrant. {@link #close()} releases every lease the
 * client still holds and stops its threads.
 */
public interface LockClient extends AutoCloseable {

    /** The longest lock name, in characters. */
    int MAX_NAME_LENGTH = 512;


    /**
     * Opens a client for a backend URI with default settings.
     *
     * @param uri the backend, e.g. {@code redis://host:6379}, {@code etcd://h1:2379,h2:2379},
     *     {@code zookeeper://h1:2181/chroot}, {@code dynamodb://table?region=eu-west-1}
     * @return an open client
     * @throws IllegalArgumentException if the URI is malformed or no provider on the classpath
     *     handles its scheme (the message names the schemes found and the jar to add)
     * @throws LockBackendException if the backend cannot be reached within the operation timeout
     *     and the backend connects eagerly
     */
    static LockClient open(String uri) {
        return open(LockClientConfig.builder(uri).build());
    }

    /**
     * Opens a client for the URI in the {@code DLOCK_URI} environment variable or, if that is not
     * set, the {@code dlock.uri} system property.
     *
     * @return an open client
     * @throws IllegalArgumentException if neither is set, or as {@link #open(String)}
     * @throws LockBackendException as {@link #open(String)}
     */
    static LockClient open() {
        String uri = System.getenv("DLOCK_URI");
        if (uri == null || uri.isBlank()) {
            uri = System.getProperty("dlock.uri");
        }
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException(
                    "uri: set the DLOCK_URI environment variable or the dlock.uri system property");
        }
        return open(uri);
    }

    /**
     * Opens a client with full configuration, choosing the provider by the URI's scheme.
     *
     * @param config the configuration
     * @return an open client
     * @throws IllegalArgumentException if {@code config} is null or as {@link #open(String)}
     * @throws LockBackendException as {@link #open(String)}
     */
    static LockClient open(LockClientConfig config) {
        if (config == null) {
            throw new IllegalArgumentException("config must not be null");
        }
        return open(config, Providers.forUri(config.uri()));
    }

    /**
     * Opens a client with an explicitly chosen provider, bypassing {@link java.util.ServiceLoader}.
     *
     * @param config the configuration
     * @param provider the provider to use
     * @return an open client
     * @throws IllegalArgumentException if either argument is null or the URI is malformed
     * @throws LockBackendException as {@link #open(String)}
     */
    static LockClient open(LockClientConfig config, LockProvider provider) {
        if (config == null) {
            throw new IllegalArgumentException("config must not be null");
        }
        if (provider == null) {
            throw new IllegalArgumentException("provider must not be null");
        }
        return new DefaultLockClient(config, provider);
    }

    /**
     * Returns a handle on a lock with the client's default options. Cheap: no I/O.
     *
     * @param name any non-empty string of at most {@value #MAX_NAME_LENGTH}
     *     characters without control characters; names are case-sensitive and distinct names
     *     never share a lock
     * @return the handle
     * @throws IllegalArgumentException if the name is invalid
     * @throws IllegalStateException if the client is closed
     */
    DistributedLock lock(String name);

    /**
     * Returns a handle on a lock with the given options. Cheap: no I/O.
     *
     * @param name as {@link #lock(String)}
     * @param options the lease settings
     * @return the handle
     * @throws IllegalArgumentException if the name is invalid, options is null, or the lease time
     *     is outside what the backend supports (the minimum and maximum of its
     *     {@link io.dlock.spi.LockBackend}; checked again when each acquire starts)
     * @throws IllegalStateException if the client is closed
     */
    DistributedLock lock(String name, LockOptions options);

    /**
     * Asks the backend who holds a lock now.
     *
     * @param name the lock
     * @return the holder, or empty if the lock is free
     * @throws IllegalArgumentException if the name is invalid
     * @throws UnsupportedOperationException if the backend does not declare
     *     {@link Capability#HOLDER_QUERY}
     * @throws LockBackendException if the backend fails or times out
     * @throws IllegalStateException if the client is closed
     */
    Optional<LockHolder> holder(String name);

    /**
     * Returns what the backend guarantees beyond the base contract.
     *
     * @return the declared capabilities
     */
    Set<Capability> capabilities();

    /**
     * Returns the configuration this client was opened with.
     *
     * @return the configuration
     */
    LockClientConfig config();

    /**
     * Releases every lease this client holds, fails acquisitions still waiting with
     * {@link IllegalStateException}, stops the client's threads and closes the backend
     * connection. Idempotent; never throws for backend failures (they are logged, and the leases
     * then end by expiry on the server). An {@link LockClientConfig.Builder#executor executor} or
     * {@link LockClientConfig.Builder#scheduler scheduler} the application supplied is not shut
     * down: the client's pending tasks on the scheduler are cancelled.
     *
     * <p>Bounded: every lease ends here at once (invalid, no longer renewed, release listeners
     * told), then the release requests go to the backend a bounded number at a time (the threads
     * used do not grow with the number of leases) under one shared deadline of one operation
     * timeout. Requests not sent or not answered by then are abandoned, and the server frees those
     * locks when their leases end. Stopping the client's own threads may take up to one more
     * operation timeout when a request in flight ignores the interrupt, and the backend's close
     * has bounds of its own (about one more timeout for the ZooKeeper backend): the time does not
     * grow with the number of leases, and the TCK (L9) holds a client with a thousand leases on a
     * frozen network to two operation timeouts plus a second.
     */
    @Override
    void close();
}
