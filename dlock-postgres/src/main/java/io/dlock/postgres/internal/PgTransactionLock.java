package io.dlock.postgres.internal;

import io.dlock.LockBackendException;
import io.dlock.spi.support.Ids;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * The transaction-scoped mode: a lock taken by a statement in the caller's transaction on the
 * caller's connection, on the same table and sequence as the lease mode. Public only so that
 * {@code io.dlock.postgres.PostgresTransactionLocks} can use it; not an API.
 *
 * <p>Each try runs inside a savepoint: a busy answer or a failure rolls back to it, which undoes
 * the try's row lock (an {@code ON CONFLICT DO UPDATE} whose condition is false still locks the
 * row) and its {@code lock_timeout}, and leaves the caller's transaction usable; a grant releases
 * the savepoint, so the row lock belongs to the caller's transaction, and restores the caller's
 * {@code lock_timeout}. Stateless and thread-safe (a {@link Connection} is not, which is the
 * caller's affair).
 */
public final class PgTransactionLock {

    /**
     * How long a try without a wait waits for a row another statement has locked: a lease-mode
     * statement holds it for microseconds, a transaction-scoped holder until its transaction ends.
     */
    static final long BRIEF_MILLIS = 50;

    /** The longest pause between two tries of a waiting call while a lease holds the lock. */
    static final long POLL_MILLIS = 100;

    private final PgSettings settings;
    private final PgSql sql;

    /**
     * A locker for one schema; no I/O.
     *
     * @param schema the schema of dlock's table
     * @throws IllegalArgumentException naming {@code schema} if it is not a lower-case identifier
     */
    public PgTransactionLock(String schema) {
        this.settings = PgSettings.forConnection(schema);
        this.sql = new PgSql(settings.schema);
    }

    /**
     * Takes the lock in the connection's current transaction, waiting at most {@code maxWait}.
     *
     * @param connection a connection with autocommit off, already checked by the caller
     * @param name the lock, already checked
     * @param maxWait how long to wait, zero or positive
     * @return the fencing token, or empty if the lock was not free within {@code maxWait}
     * @throws LockBackendException if a statement fails (the transaction stays usable unless the
     *     connection broke); a {@link io.dlock.LockConfigurationException} for a missing table or
     *     missing rights
     */
    public OptionalLong lock(Connection connection, String name, Duration maxWait) {
        long start = System.nanoTime();
        long waitNanos = maxWait.toNanos();
        String owner = "tx-" + Ids.ownerId();
        String callerLockTimeout = query(connection, name, "SELECT current_setting('lock_timeout')");
        long pause = 5;
        while (true) {
            long left = TimeUnit.NANOSECONDS.toMillis(waitNanos - (System.nanoTime() - start));
            long lockWait = Math.max(BRIEF_MILLIS, left);
            long[] answer = tryOnce(connection, name, owner, lockWait, callerLockTimeout);
            if (answer[0] > 0) {
                return OptionalLong.of(answer[0]);
            }
            left = TimeUnit.NANOSECONDS.toMillis(waitNanos - (System.nanoTime() - start));
            if (left <= 0) {
                return OptionalLong.empty();
            }
            // a lease holds it (its remaining lease is the hint), or the row was locked for the whole
            // wait: poll, no longer than the hint, POLL_MILLIS or what is left
            long hint = answer[1];
            long sleep = Math.min(left, Math.min(POLL_MILLIS, hint > 0 ? Math.max(1, hint) : pause));
            pause = Math.min(POLL_MILLIS, pause * 2);
            try {
                Thread.sleep(sleep);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockBackendException("interrupted while waiting for lock '" + name + "' in a transaction",
                        name, e);
            }
        }
    }

    /** One try in a savepoint: {token, 0} granted, {0, remaining lease ms or 0} busy. */
    private long[] tryOnce(Connection c, String name, String owner, long lockWaitMillis, String callerLockTimeout) {
        Savepoint savepoint;
        try {
            savepoint = c.setSavepoint();
        } catch (SQLException e) {
            throw PgErrors.translate(e, "savepoint for a transaction-scoped acquire of lock '" + name + "'", name, settings);
        }
        boolean granted = false;
        boolean failing = true;
        try {
            try (PreparedStatement set = c.prepareStatement("SELECT set_config('lock_timeout', ?, true)")) {
                set.setString(1, lockWaitMillis + "ms");
                set.executeQuery().close();
            }
            long[] answer;
            try (PreparedStatement ps = c.prepareStatement(sql.transactionAcquire.sql())) {
                int[] params = sql.transactionAcquire.params();
                for (int i = 0; i < params.length; i++) {
                    ps.setString(i + 1, params[i] == 1 ? name : owner);
                }
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        answer = new long[] {0, 0};
                    } else {
                        long token = rs.getLong(1);
                        answer = rs.wasNull() ? new long[] {0, rs.getLong(2)} : new long[] {token, 0};
                    }
                }
            } catch (SQLException e) {
                if (!PgLockBackend.LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
                    throw e;
                }
                // another transaction holds the row (its lock_timeout passed)
                answer = new long[] {0, 0};
            }
            if (answer[0] > 0) {
                try (PreparedStatement reset = c.prepareStatement("SELECT set_config('lock_timeout', ?, true)")) {
                    reset.setString(1, callerLockTimeout);
                    reset.executeQuery().close();
                }
                c.releaseSavepoint(savepoint);
                granted = true;
            }
            failing = false;
            return answer;
        } catch (SQLException e) {
            throw PgErrors.translate(e, "transaction-scoped acquire of lock '" + name + "'", name, settings);
        } finally {
            if (!granted) {
                try {
                    c.rollback(savepoint);
                } catch (SQLException e) {
                    if (!failing) {
                        // a busy answer whose row lock could not be undone must not look like one
                        throw PgErrors.translate(e, "rollback of a transaction-scoped acquire of lock '" + name
                                + "'", name, settings);
                    }
                    // else the statement's own failure, being thrown, is what the caller sees
                }
            }
        }
    }

    private String query(Connection c, String name, String statement) {
        try (PreparedStatement ps = c.prepareStatement(statement); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw PgErrors.translate(e, "transaction-scoped acquire of lock '" + name + "'", name, settings);
        }
    }
}
