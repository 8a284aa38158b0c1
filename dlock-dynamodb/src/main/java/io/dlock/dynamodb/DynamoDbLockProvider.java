package io.dlock.dynamodb;

import io.dlock.spi.support.Arguments;
import io.dlock.Capability;
import io.dlock.dynamodb.internal.DynamoDbLockBackend;
import io.dlock.spi.BackendContext;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import java.util.Set;

/**
 * The DynamoDB {@link LockProvider}: handles {@code dynamodb://TABLE?region=...} URIs. Found by
 * {@link java.util.ServiceLoader}; it can also be passed to
 * {@link io.dlock.LockClient#open(io.dlock.LockClientConfig, LockProvider)} explicitly.
 *
 * <p>The backend declares {@link Capability#FENCING} and {@link Capability#HOLDER_QUERY}. Stateless
 * and thread-safe. See the package documentation for the URI, the item it writes per lock and its
 * guarantees.
 */
public final class DynamoDbLockProvider implements LockProvider {

    private static final Set<String> SCHEMES = Set.of("dynamodb");

    /** Creates the provider; {@link java.util.ServiceLoader} uses this. */
    public DynamoDbLockProvider() {
    }

    /** @return {@code dynamodb} */
    @Override
    public String name() {
        return "dynamodb";
    }

    /** @return {@code dynamodb} */
    @Override
    public Set<String> schemes() {
        return SCHEMES;
    }

    /**
     * Opens a backend for one client. No I/O unless the URI says {@code createTable=true}: then the
     * table is looked up, created if missing, and waited for until it is active.
     *
     * @param context the client's URI, timeouts, clocks and thread factory
     * @return the backend
     * @throws IllegalArgumentException if the URI is not a valid {@code dynamodb://} URI; the
     *     message names the part and never shows credentials
     * @throws io.dlock.LockBackendException if {@code createTable=true} and the table could not be
     *     found, created or made ready
     */
    @Override
    public LockBackend<?> open(BackendContext context) {
        Arguments.notNull("context", context);
        return DynamoDbLockBackend.open(context);
    }

    @Override
    public String toString() {
        return "DynamoDbLockProvider";
    }
}
