package io.dlock.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The transaction-scoped mode against a real server, alone and beside the lease mode. */
class PostgresTransactionLocksTest {

    private static PostgresServer server;
    private static LockClient leases;
    private static final PostgresTransactionLocks LOCKS = new PostgresTransactionLocks();

    @BeforeAll
    static void start() throws Exception {
        server = PostgresServer.start();
        PostgresFixture.setUp(server);
        leases = LockClient.open(LockClientConfig.builder(uri()).operationTimeout(Duration.ofSeconds(2)).build());
        leases.holder("tx-setup"); // creates dlock's table and sequence
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE tx_ledger (id int PRIMARY KEY, amount bigint NOT NULL)");
        }
    }

    @AfterAll
    static void stop() {
        if (leases != null) {
            leases.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private static String uri() {
        return server.uri(PostgresFixture.USER, PostgresFixture.PASSWORD, PostgresFixture.DATABASE);
    }

    private static Connection connect() throws SQLException {
        return connect(server);
    }

    /**
     * A plain JDBC connection of the role {@code dlock} (autocommit on).
     *
     * @param server the server, set up by {@link PostgresFixture#setUp}
     * @return the connection
     * @throws SQLException if it cannot connect
     */
    static Connection connect(PostgresServer server) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", PostgresFixture.USER);
        p.setProperty("password", PostgresFixture.PASSWORD);
        return DriverManager.getConnection("jdbc:postgresql://" + PostgresServer.HOST + ":" + server.port() + "/"
                + PostgresFixture.DATABASE, p);
    }

    private static Connection inTransaction() throws SQLException {
        Connection c = connect();
        c.setAutoCommit(false);
        return c;
    }

    @Test
    void twoTransactionsOnOneNameExcludeEachOther() throws Exception {
        try (Connection a = inTransaction(); Connection b = inTransaction()) {
            long first = LOCKS.tryLock(a, "tx-two").orElseThrow();
            assertTrue(first > 0);
            assertTrue(LOCKS.tryLock(b, "tx-two").isEmpty(), "a second transaction must not get the lock");
            // b's transaction is still usable after the busy answer
            try (Statement s = b.createStatement(); ResultSet rs = s.executeQuery("SELECT 1")) {
                assertTrue(rs.next());
            }
            a.commit();
            long second = LOCKS.tryLock(b, "tx-two").orElseThrow();
            assertTrue(second > first, second + " must exceed " + first);
            // held until b's transaction ends, across its statements
            try (Connection c = inTransaction()) {
                assertTrue(LOCKS.tryLock(c, "tx-two").isEmpty());
                b.commit();
                assertTrue(LOCKS.tryLock(c, "tx-two").isPresent());
                c.rollback();
            }
        }
    }

    @Test
    void aRollbackFreesTheLockAndUndoesTheWrites() throws Exception {
        try (Connection a = inTransaction(); Connection b = inTransaction()) {
            long token = LOCKS.tryLock(a, "tx-rollback").orElseThrow();
            try (Statement s = a.createStatement()) {
                s.executeUpdate("INSERT INTO tx_ledger VALUES (1, " + token + ")");
            }
            assertTrue(LOCKS.tryLock(b, "tx-rollback").isEmpty());
            a.rollback();
            assertTrue(LOCKS.tryLock(b, "tx-rollback").isPresent());
            b.commit();
            try (Statement s = b.createStatement(); ResultSet rs = s.executeQuery("SELECT count(*) FROM tx_ledger WHERE id = 1")) {
                rs.next();
                assertEquals(0, rs.getInt(1));
            }
            b.commit();
        }
    }

    /** A waiting transaction waits on the server and gets the lock as soon as the holder's transaction ends. */
    @Test
    void aWaitingTransactionGetsTheLockWhenTheHolderCommits() throws Exception {
        try (Connection a = inTransaction(); Connection b = inTransaction()) {
            long first = LOCKS.tryLock(a, "tx-wait").orElseThrow();
            long t0 = System.nanoTime();
            CompletableFuture<OptionalLong> waiter = CompletableFuture.supplyAsync(
                    () -> LOCKS.tryLock(b, "tx-wait", Duration.ofSeconds(20)));
            Thread.sleep(300);
            assertFalse(waiter.isDone());
            a.commit();
            long second = waiter.get(20, TimeUnit.SECONDS).orElseThrow();
            long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(second > first);
            // generous: the grant follows the commit at once, far below the 20 s the waiter allowed
            assertTrue(waitedMillis < 10_000, "waited " + waitedMillis + " ms");
            b.rollback();
        }
    }

    /** A lease-mode holder blocks a transaction until it releases, and a transaction blocks lease-mode acquires. */
    @Test
    void theTwoModesExcludeEachOther() throws Exception {
        LockOptions tenSeconds = LockOptions.builder().leaseTime(Duration.ofSeconds(10)).build();
        Lease lease = leases.lock("tx-modes", tenSeconds).tryAcquire().orElseThrow();
        try (Connection a = inTransaction()) {
            assertTrue(LOCKS.tryLock(a, "tx-modes").isEmpty(), "a lease holds it");
            CompletableFuture<OptionalLong> waiter = CompletableFuture.supplyAsync(
                    () -> LOCKS.tryLock(a, "tx-modes", Duration.ofSeconds(20)));
            Thread.sleep(300);
            assertFalse(waiter.isDone());
            lease.release();
            long txToken = waiter.get(20, TimeUnit.SECONDS).orElseThrow();
            assertTrue(txToken > lease.fencingToken());

            // the reverse: a lease-mode try answers busy (not an error, not a hang) while the transaction holds it
            long t0 = System.nanoTime();
            assertTrue(leases.lock("tx-modes").tryAcquire().isEmpty(), "the transaction holds it");
            long busyMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            // a quarter of the 2 s operation timeout is the statement's lock_timeout; generous bound for a busy machine
            assertTrue(busyMillis < 1_900, "busy answered after " + busyMillis + " ms");
            CompletableFuture<Optional<Lease>> leaseWaiter = CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            return leases.lock("tx-modes").tryAcquire(Duration.ofSeconds(20));
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new IllegalStateException(e);
                        }
                    });
            Thread.sleep(600);
            assertFalse(leaseWaiter.isDone());
            a.commit();
            Lease next = leaseWaiter.get(20, TimeUnit.SECONDS).orElseThrow();
            assertTrue(next.fencingToken() > txToken, next.fencingToken() + " must exceed " + txToken);
            next.release();
        }
    }

    /** A lease that its holder stopped renewing (a crashed holder's row) keeps a transaction out until it expires. */
    @Test
    void aCrashedLeaseHoldersRowBlocksUntilItsLeaseEnds() throws Exception {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.executeUpdate("INSERT INTO public.dlock_locks (name, owner, token, expires_at, acquired_at) VALUES "
                    + "('tx-crashed', 'gone', nextval('public.dlock_fence'), now() + interval '1500 milliseconds', now())");
        }
        try (Connection a = inTransaction()) {
            assertTrue(LOCKS.tryLock(a, "tx-crashed").isEmpty());
            long t0 = System.nanoTime();
            assertTrue(LOCKS.tryLock(a, "tx-crashed", Duration.ofSeconds(20)).isPresent());
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            // the lease had up to 1.5 s left; polled at least every 100 ms (bounds generous for a busy machine)
            assertTrue(waited > 200 && waited < 10_000, "waited " + waited + " ms");
            a.commit();
        }
    }

    /** One sequence for both modes: every grant's token is above every earlier grant's, in either mode. */
    @Test
    void tokensIncreaseStrictlyAcrossBothModes() throws Exception {
        long last = 0;
        try (Connection a = inTransaction()) {
            for (int i = 0; i < 10; i++) {
                long tx = LOCKS.tryLock(a, "tx-seq").orElseThrow();
                assertTrue(tx > last, tx + " after " + last);
                a.commit();
                try (Lease lease = leases.lock("tx-seq").tryAcquire().orElseThrow()) {
                    assertTrue(lease.fencingToken() > tx, lease.fencingToken() + " after " + tx);
                    last = lease.fencingToken();
                }
            }
        }
    }

    /** The caller's lock_timeout is as it was after a grant and after a busy answer. */
    @Test
    void theCallersLockTimeoutIsKept() throws Exception {
        try (Connection a = inTransaction(); Connection b = inTransaction()) {
            try (Statement s = a.createStatement()) {
                s.execute("SET LOCAL lock_timeout = '7s'");
            }
            try (Statement s = b.createStatement()) {
                s.execute("SET LOCAL lock_timeout = '9s'");
            }
            assertTrue(LOCKS.tryLock(a, "tx-timeout").isPresent());
            assertTrue(LOCKS.tryLock(b, "tx-timeout").isEmpty());
            assertEquals("7s", show(a));
            assertEquals("9s", show(b));
            a.rollback();
            b.rollback();
        }
    }

    private static String show(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW lock_timeout")) {
            rs.next();
            return rs.getString(1);
        }
    }

    @Test
    void badArgumentsAreRejectedNamingTheParameter() throws Exception {
        try (Connection auto = connect(); Connection tx = inTransaction()) {
            assertTrue(message(() -> LOCKS.tryLock(auto, "x")).startsWith("connection"));
            assertTrue(message(() -> LOCKS.tryLock(null, "x")).startsWith("connection"));
            assertTrue(message(() -> LOCKS.tryLock(tx, null)).startsWith("name"));
            assertTrue(message(() -> LOCKS.tryLock(tx, "")).startsWith("name"));
            assertTrue(message(() -> LOCKS.tryLock(tx, "a\u0000b")).startsWith("name"));
            assertTrue(message(() -> LOCKS.tryLock(tx, "x".repeat(LockClient.MAX_NAME_LENGTH + 1))).startsWith("name"));
            assertTrue(message(() -> LOCKS.tryLock(tx, "x", Duration.ofMillis(-1))).startsWith("maxWait"));
            assertTrue(message(() -> LOCKS.tryLock(tx, "x", null)).startsWith("maxWait"));
            assertTrue(message(() -> new PostgresTransactionLocks("Bad-Schema")).startsWith("schema"));
            assertTrue(message(() -> new PostgresTransactionLocks(null)).startsWith("schema"));
            tx.rollback();
        }
        Connection closed = inTransaction();
        closed.close();
        assertTrue(message(() -> LOCKS.tryLock(closed, "x")).startsWith("connection"));
    }

    private static String message(Runnable call) {
        return assertThrows(IllegalArgumentException.class, call::run).getMessage();
    }
}
