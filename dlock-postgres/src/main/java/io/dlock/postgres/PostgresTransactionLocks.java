package io.dlock.postgres;

import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.postgres.internal.PgTransactionLock;
import io.dlock.spi.support.Arguments;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.OptionalLong;

/**
 * The transaction-scoped mode: a lock taken inside the caller's own transaction, for work whose
 * writes live in the same PostgreSQL database. The lock and the writes commit or roll back
 * together, and the fencing token is in the transaction's hands for its writes:
 *
 * <pre>{@code
 * PostgresTransactionLocks locks = new PostgresTransactionLocks("public");
 * connection.setAutoCommit(false);
 * OptionalLong token = locks.tryLock(connection, "ledger", Duration.ofSeconds(2));
 * if (token.isPresent()) {
 *     // ... writes on the same connection, each one fenced with token.getAsLong() ...
 *     connection.commit(); // the lock ends with the transaction: commit or rollback
 * }
 * }</pre>
 *
 * <p>It uses the lease mode's table and sequence ({@code SCHEMA.dlock_locks},
 * {@code SCHEMA.dlock_fence}), which must exist (a lease-mode client creates them on first use, or
 * run {@code io/dlock/postgres/postgres-schema.sql}). A grant takes the lock's row in the caller's
 * transaction only if no lease holds it (and no lease-mode waiter holds its place next in line);
 * the row stays locked, and the lock held, until the transaction commits or rolls back, and its
 * lease is written as already ended, so the lock is free the moment the transaction ends. So the
 * two modes exclude each other on one name: a lease-mode acquire meets the locked row and answers
 * busy (after a quarter of its operation timeout, its statement's {@code lock_timeout}), and this
 * mode answers busy while a lease holds the lock. Tokens come from the one sequence, strictly
 * increasing across both modes; a rolled-back grant leaves a gap.
 *
 * <p>Each try is a few statements on the caller's connection inside a savepoint, so a busy answer
 * or a failure leaves the caller's transaction as it was (the savepoint is rolled back) and the
 * caller's {@code lock_timeout} is restored. Run it in {@code READ COMMITTED} (PostgreSQL's
 * default): under {@code REPEATABLE READ} a lock row changed since the transaction's snapshot is a
 * serialization failure, thrown as a {@link LockBackendException}. A transaction left open holds
 * the lock for as long as it stays open (a stopped process's included: PostgreSQL's
 * {@code idle_in_transaction_session_timeout} ends such transactions); prefer the lease mode
 * ({@link LockClient}) for work outside this database or longer than a transaction should be.
 * A holder query ({@link LockClient#holder(String)}) does not see a transaction-scoped
 * holder. Stateless and thread-safe; a {@link Connection} is not, so use each from one thread.
 */
public final class PostgresTransactionLocks {

    private final PgTransactionLock locker;

    /** A locker on the table in the schema {@code public}. */
    public PostgresTransactionLocks() {
        this("public");
    }

    /**
     * A locker on the table in the given schema (the lease mode's {@code schema} parameter).
     *
     * @param schema a lower-case PostgreSQL identifier
     * @throws IllegalArgumentException naming {@code schema} if it is null or not such an identifier
     */
    public PostgresTransactionLocks(String schema) {
        Arguments.notNull("schema", schema);
        this.locker = new PgTransactionLock(schema);
    }

    /**
     * Takes the lock in the connection's current transaction if it is free now (waiting at most a
     * moment for a row another statement is writing).
     *
     * @param connection an open connection with autocommit off; the lock is held until its
     *     transaction ends
     * @param name the lock, as the lease mode names it
     * @return the fencing token, or empty if the lock is held
     * @throws IllegalArgumentException naming the parameter if one is null, the connection is closed
     *     or in autocommit mode, or the name is not a valid lock name
     * @throws LockBackendException if a statement fails
     */
    public OptionalLong tryLock(Connection connection, String name) {
        return tryLock(connection, name, Duration.ZERO);
    }

    /**
     * Takes the lock in the connection's current transaction, waiting at most {@code maxWait} for
     * it: a transaction holding it is waited for on the server (the grant follows its end at once),
     * a lease holder by polling, at least every 100 ms and when its lease ends.
     *
     * @param connection an open connection with autocommit off; the lock is held until its
     *     transaction ends
     * @param name the lock, as the lease mode names it
     * @param maxWait how long to wait, zero or positive
     * @return the fencing token, or empty if the lock was not free within {@code maxWait}
     * @throws IllegalArgumentException naming the parameter if one is null, the connection is closed
     *     or in autocommit mode, the name is not a valid lock name, or {@code maxWait} is negative
     * @throws LockBackendException if a statement fails, or the thread is interrupted while waiting
     *     (the interrupt flag is kept)
     */
    public OptionalLong tryLock(Connection connection, String name, Duration maxWait) {
        Arguments.notNull("connection", connection);
        Arguments.lockName("name", name);
        Arguments.nonNegative("maxWait", maxWait);
        try {
            if (connection.isClosed()) {
                throw new IllegalArgumentException("connection must be open");
            }
            if (connection.getAutoCommit()) {
                throw new IllegalArgumentException("connection must have autocommit off: the lock lasts as long "
                        + "as the transaction it is taken in (call connection.setAutoCommit(false) first)");
            }
        } catch (SQLException e) {
            throw new LockBackendException("could not read the connection's state: " + e.getMessage(), name, e);
        }
        return locker.lock(connection, name, maxWait);
    }
}
