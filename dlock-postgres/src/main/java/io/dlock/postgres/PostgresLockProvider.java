package io.dlock.postgres;

import io.dlock.Capability;
import io.dlock.postgres.internal.PgLockBackend;
import io.dlock.spi.BackendContext;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import io.dlock.spi.support.AbstractLockProvider;
import io.dlock.spi.support.Arguments;
import java.util.Set;
import javax.sql.DataSource;

/**
 * The PostgreSQL {@link LockProvider}: handles {@code postgresql://} and {@code postgres://} URIs.
 * Found by {@link java.util.ServiceLoader}; it can also be passed to
 * {@link io.dlock.LockClient#open(io.dlock.LockClientConfig, LockProvider)} explicitly, to take
 * the connections from an application's existing pool:
 *
 * <pre>{@code
 * LockClient client = LockClient.open(LockClientConfig.builder("postgresql://?schema=locks").build(),
 *         PostgresLockProvider.withDataSource(dataSource));
 * }</pre>
 *
 * <p>The backend declares {@link Capability#FENCING}, {@link Capability#NOTIFY_WAITERS} and
 * {@link Capability#HOLDER_QUERY}. Stateless and thread-safe. See the package documentation for
 * the URI, the table it writes, the connections it holds and its guarantees.
 */
public final class PostgresLockProvider extends AbstractLockProvider {

    private final DataSource dataSource;

    /** Creates the provider that connects with the URI's settings; {@link java.util.ServiceLoader} uses this. */
    public PostgresLockProvider() {
        this(null);
    }

    private PostgresLockProvider(DataSource dataSource) {
        super("postgres", Set.of("postgresql", "postgres"), dataSource == null ? null : "DataSource");
        this.dataSource = dataSource;
    }

    /**
     * Returns a provider whose clients take their connections from the given {@code DataSource}
     * (an application's pool, say) instead of connecting themselves. Such a client's URI names no
     * server, database or credentials, only the parameters {@code schema} and {@code poolSize}:
     * {@code postgresql://?schema=locks}, or just {@code postgresql://}. Each client then holds at
     * most {@code poolSize} (default 4) of the pool's connections for its operations, each only
     * for the duration of one statement, plus one for {@code LISTEN} from the first wait for a
     * lock until the client is closed.
     *
     * @param dataSource the connections, to a PostgreSQL 9.5 or later primary
     * @return the provider
     * @throws IllegalArgumentException if {@code dataSource} is null
     */
    public static PostgresLockProvider withDataSource(DataSource dataSource) {
        return new PostgresLockProvider(Arguments.notNull("dataSource", dataSource));
    }


    /**
     * Opens a backend for one client. No I/O: connections are made on first use.
     *
     * @param context the client's URI, timeouts and thread factory
     * @return the backend
     * @throws IllegalArgumentException if the context is null or the URI is not a valid
     *     {@code postgresql://} URI (for this provider's mode); the message names the part and never
     *     shows the password
     */
    @Override
    protected LockBackend<?> openBackend(BackendContext context) {
        return PgLockBackend.open(context, dataSource);
    }
}
