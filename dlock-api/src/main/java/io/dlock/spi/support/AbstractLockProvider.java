package io.dlock.spi.support;

import io.dlock.spi.BackendContext;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import java.util.Set;

/**
 * The part of a {@link LockProvider} that is the same for every backend: its name and schemes,
 * the argument check of {@link #open(BackendContext)}, and a {@code toString} that says whether
 * the instance carries a customization (a TLS trust store, a data source) without showing it.
 * A provider extends it, keeps a public no-argument constructor for
 * {@link java.util.ServiceLoader}, and implements {@link #openBackend(BackendContext)}.
 *
 * <p>Immutable and thread-safe, as a provider must be: one instance opens backends for any
 * number of clients, concurrently.
 */
public abstract class AbstractLockProvider implements LockProvider {

    private final String name;
    private final Set<String> schemes;
    private final String variant;

    /**
     * Makes the provider.
     *
     * @param name the provider's name, e.g. {@code redis}
     * @param schemes the URI schemes it serves, e.g. {@code redis} and {@code rediss}
     * @param variant what customizes this instance, for {@code toString} (e.g. {@code "custom TLS"};
     *     never the object itself, which may hold secrets), or {@code null} for the default instance
     * @throws IllegalArgumentException if {@code name} or {@code schemes} is {@code null} or empty
     */
    protected AbstractLockProvider(String name, Set<String> schemes, String variant) {
        Arguments.notNull("name", name);
        Arguments.notNull("schemes", schemes);
        if (name.isEmpty()) {
            throw new IllegalArgumentException("name must not be empty");
        }
        if (schemes.isEmpty()) {
            throw new IllegalArgumentException("schemes must not be empty");
        }
        this.name = name;
        this.schemes = Set.copyOf(schemes);
        this.variant = variant;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final Set<String> schemes() {
        return schemes;
    }

    /**
     * Checks the argument and opens a backend with {@link #openBackend(BackendContext)}.
     *
     * @param context the client's URI, configuration, clocks, thread factory and event sink
     * @return the backend, never {@code null}
     * @throws IllegalArgumentException if {@code context} is {@code null}, or the URI is not valid
     *     for this provider (the message names the part and never shows credentials)
     * @throws io.dlock.LockBackendException if the backend connects while opening and cannot
     */
    @Override
    public final LockBackend<?> open(BackendContext context) {
        Arguments.notNull("context", context);
        return openBackend(context);
    }

    /**
     * Opens a backend for one client; called by {@link #open(BackendContext)} with a non-null
     * context. See {@link LockProvider#open(BackendContext)} for the contract.
     *
     * @param context the client's context
     * @return the backend, never {@code null}
     */
    protected abstract LockBackend<?> openBackend(BackendContext context);

    /** @return the class's simple name, and the variant in braces if there is one */
    @Override
    public String toString() {
        return getClass().getSimpleName() + (variant == null ? "" : "{" + variant + "}");
    }
}
