/**
 * The PostgreSQL backend of dlock: put {@code dlock-postgres} on the classpath and open a
 * {@code postgresql://} (or {@code postgres://}) URI, or pass
 * {@link io.dlock.postgres.PostgresLockProvider#withDataSource(javax.sql.DataSource)} to use an
 * application's own connection pool.
 *
 * <pre>{@code
 * try (LockClient client = LockClient.open("postgresql://dlock:secret@db-1:5432/payments?schema=locks")) {
 *     ...
 * }
 * }</pre>
 *
 * <p>URI: {@code postgresql://[user:password@]host[:port]/database[?parameters]}; the port
 * defaults to 5432. Parameters: {@code schema} (where dlock's table and sequence live, a
 * lower-case identifier, default {@code public}), {@code sslmode} ({@code disable},
 * {@code allow}, {@code prefer} (the default), {@code require}, {@code verify-ca},
 * {@code verify-full}, as for the JDBC driver and libpq), {@code sslrootcert} (a CA certificate
 * file to trust for {@code verify-ca}/{@code verify-full}), {@code poolSize} (connections for
 * operations, 1 to 64, default 4). Unknown parameters are rejected. Encode special characters of
 * the password with {@code %XX}. With a {@code DataSource}, the URI names only {@code schema} and
 * {@code poolSize}: {@code postgresql://?schema=locks}.
 *
 * <p>What the backend keeps in the database, in schema {@code S}: the table {@code S.dlock_locks}
 * with one row per held lock (name, owner id, token, expiry and grant time on the server's clock,
 * and the waiter next in line; a released lock's row is deleted unless a waiter is next in line), and the sequence {@code S.dlock_fence}, the source of
 * fencing tokens for every name. Both are created on first use when the role may; otherwise run
 * the script {@code io/dlock/postgres/postgres-schema.sql} (in this jar) as the schema's owner. A
 * missing table the role may not create is a {@link io.dlock.LockConfigurationException} of kind
 * {@code MISSING_RESOURCE}; a role without rights on an existing table gets {@code PERMISSION}.
 * Release notices go to the channel {@code dlock_released}.
 *
 * <p>Leases are kept by the server's clock alone: a grant or renewal sets the expiry to the
 * server's {@code now()} plus the lease time, and a lock whose expiry has passed on the server's
 * clock may be taken over; no client's clock is ever stored or compared. A crashed or stopped
 * holder's lock is therefore free one lease time after its last renewal. Tokens come from one
 * sequence: they strictly increase for every name, across restarts and crash recovery of the
 * server (a committed grant's token is durable with its commit), as long as dlock's role does not
 * run with {@code synchronous_commit = off} (the backend refuses it).
 *
 * <p>Connections: at most {@code poolSize} at a time for operations, plus one held for
 * {@code LISTEN} from the first wait until the client is closed. With a {@code DataSource}, an
 * operation borrows a connection for one statement and gives it back at once.
 *
 * <p>Guarantees: {@link io.dlock.Capability#FENCING}, {@link io.dlock.Capability#NOTIFY_WAITERS}
 * and {@link io.dlock.Capability#HOLDER_QUERY}, on one PostgreSQL 9.5 or later primary. Streaming
 * replication is asynchronous by default, so a failover can lose a grant and the tokens after it:
 * the backend does not declare {@link io.dlock.Capability#SURVIVES_SERVER_FAILOVER}. Waiters are
 * not served in strict arrival order across clients (no {@link io.dlock.Capability#FAIR}), but none
 * starves: the row keeps one place next in line for the longest waiter that has asked since the
 * last grant, which a client that releases and asks again at once must respect.
 */
package io.dlock.postgres;
