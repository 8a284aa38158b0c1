package io.dlock.spi;

import java.util.Set;

/**
 * A backend's entry point, found by {@link java.util.ServiceLoader} and chosen by URI scheme.
 * Implementations must have a public no-argument constructor and be stateless and thread-safe.
 */
public interface LockProvider {

    /** @return a short name for reports and messages, e.g. {@code redis} */
    String name();

    /** @return the URI schemes this provider handles, lower case, e.g. {@code redis, rediss} */
    Set<String> schemes();

    /**
     * Opens a backend connection for one client.
     *
     * @param context the client's URI, timeouts, clocks, thread factory and event sink
     * @return the backend
     * @throws IllegalArgumentException if the URI is not valid for this provider (naming the part)
     * @throws io.dlock.LockBackendException if the backend is unreachable and the provider
     *     connects eagerly
     */
    LockBackend open(BackendContext context);
}
