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
     * Opens a backend connection for one client. The core captures the backend's state type once
     * and passes every grant back to the backend that made it.
     *
     * @param context the client's URI, timeouts, clocks, thread factory and event sink
     * @return the backend
     * @throws IllegalArgumentException if the context is {@code null} or the URI is not valid for
     *     this provider (naming the part)
     * @throws io.dlock.LockBackendException if the backend is unreachable and the provider
     *     connects eagerly, within the operation timeout
     */
    LockBackend<?> open(BackendContext context);
}
