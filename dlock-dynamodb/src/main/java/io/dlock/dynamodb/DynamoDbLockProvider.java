package io.dlock.dynamodb;

import io.dlock.Capability;
import io.dlock.dynamodb.internal.DynamoDbLockBackend;
import io.dlock.spi.BackendContext;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import io.dlock.spi.support.AbstractLockProvider;
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
public final class DynamoDbLockProvider extends AbstractLockProvider {

    /** Creates the provider; {@link java.util.ServiceLoader} uses this. */
    public DynamoDbLockProvider() {
        super("dynamodb", Set.of("dynamodb"), null);
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
    protected LockBackend<?> openBackend(BackendContext context) {
        return DynamoDbLockBackend.open(context);
    }
}
