package io.dlock.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import io.dlock.tck.TcpProxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/FENCING.md's SQL examples, each against a real server, each showing a stale write refused.
 * The code between the {@code fencing:} markers is quoted in docs/FENCING.md, which
 * {@link FencingDocsTest} holds to it.
 */
class FencingExamplesTest {

    private static PostgresServer server;

    @BeforeAll
    static void start() throws Exception {
        server = PostgresServer.start();
        PostgresFixture.setUp(server);
        try (Connection c = PostgresTransactionLocksTest.connect(server); Statement s = c.createStatement()) {
            // fencing:sql-schema
            s.execute("CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL,"
                    + " fence bigint NOT NULL DEFAULT 0, version bigint NOT NULL DEFAULT 0)");
            s.execute("CREATE TABLE payments (idempotency_key text PRIMARY KEY, account int NOT NULL,"
                    + " amount bigint NOT NULL)");
            // end fencing:sql-schema
            s.execute("INSERT INTO accounts (id, balance) VALUES (1, 100), (2, 100), (3, 100), (4, 100)");
        }
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static String uri(int port) {
        return "postgresql://" + PostgresFixture.USER + ":" + PostgresFixture.PASSWORD + "@" + PostgresServer.HOST + ":"
                + port + "/" + PostgresFixture.DATABASE;
    }

    // fencing:sql-fence-column
    /** Writes the balance unless a later lock holder has written it: true if the write was accepted. */
    static boolean writeBalance(Connection db, int account, long balance, long token) throws SQLException {
        try (PreparedStatement ps = db.prepareStatement(
                "UPDATE accounts SET balance = ?, fence = ? WHERE id = ? AND fence <= ?")) {
            ps.setLong(1, balance);
            ps.setLong(2, token);
            ps.setInt(3, account);
            ps.setLong(4, token);
            return ps.executeUpdate() == 1; // 0 rows: a holder with a later token wrote first
        }
    }
    // end fencing:sql-fence-column

    /**
     * A holds the lock with token t1 and stalls (its link to the lock server is frozen, so it cannot
     * renew); its lease ends on the server; B gets t2 and writes; A's write with t1 is refused,
     * and B's later writes with t2 are still accepted (the fence is {@code <=}, not {@code <}).
     */
    @Test
    void theFenceColumnRefusesAStalledHoldersWrite() throws Exception {
        LockOptions oneSecond = LockOptions.builder().leaseTime(Duration.ofSeconds(1)).build();
        try (TcpProxy proxy = TcpProxy.start(server.address());
             LockClient a = LockClient.open(uri(proxy.address().getPort()));
             LockClient b = LockClient.open(uri(server.port()));
             Connection db = PostgresTransactionLocksTest.connect(server)) {
            Lease leaseA = a.lock("account-1", oneSecond).tryAcquire().orElseThrow();
            long t1 = leaseA.fencingToken();
            proxy.freeze(); // A stalls: no renewal reaches the server
            Lease leaseB = b.lock("account-1", oneSecond).tryAcquire(Duration.ofSeconds(20)).orElseThrow();
            long t2 = leaseB.fencingToken();
            assertTrue(t2 > t1);
            assertTrue(writeBalance(db, 1, 150, t2), "B's write");
            assertTrue(writeBalance(db, 1, 160, t2), "B's second write with the same token");
            assertFalse(writeBalance(db, 1, 50, t1), "A's stale write must be refused");
            assertEquals(160, balance(db, 1));
            leaseB.release();
            proxy.unfreeze();
        }
    }

    // fencing:sql-version-column
    /** Reads the balance and its version, to write back with {@link #writeIfUnchanged}. */
    static long[] readBalance(Connection db, int account) throws SQLException {
        try (PreparedStatement ps = db.prepareStatement("SELECT balance, version FROM accounts WHERE id = ?")) {
            ps.setInt(1, account);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new long[] {rs.getLong(1), rs.getLong(2)};
            }
        }
    }

    /** Writes the balance if nobody wrote the row since it was read at {@code version}. */
    static boolean writeIfUnchanged(Connection db, int account, long balance, long version) throws SQLException {
        try (PreparedStatement ps = db.prepareStatement(
                "UPDATE accounts SET balance = ?, version = version + 1 WHERE id = ? AND version = ?")) {
            ps.setLong(1, balance);
            ps.setInt(2, account);
            ps.setLong(3, version);
            return ps.executeUpdate() == 1; // 0 rows: someone wrote since the read
        }
    }
    // end fencing:sql-version-column

    /** A reads, stalls; B reads, writes; A's write from its stale read is refused. No token needed. */
    @Test
    void theVersionColumnRefusesAWriteFromAStaleRead() throws Exception {
        try (Connection db = PostgresTransactionLocksTest.connect(server)) {
            long[] readA = readBalance(db, 2);
            long[] readB = readBalance(db, 2);
            assertTrue(writeIfUnchanged(db, 2, readB[0] + 10, readB[1]), "B's write");
            assertFalse(writeIfUnchanged(db, 2, readA[0] - 10, readA[1]), "A's write from a stale read must be refused");
            assertEquals(110, balance(db, 2));
        }
    }

    // fencing:sql-idempotency-key
    /** Applies a payment once, whoever sends it and however often: true if this call applied it. */
    static boolean applyOnce(Connection db, String key, int account, long amount) throws SQLException {
        boolean autoCommit = db.getAutoCommit();
        db.setAutoCommit(false);
        try (PreparedStatement record = db.prepareStatement(
                     "INSERT INTO payments (idempotency_key, account, amount) VALUES (?, ?, ?) ON CONFLICT DO NOTHING");
             PreparedStatement apply = db.prepareStatement("UPDATE accounts SET balance = balance + ? WHERE id = ?")) {
            record.setString(1, key);
            record.setInt(2, account);
            record.setLong(3, amount);
            if (record.executeUpdate() == 0) { // applied before
                db.rollback();
                return false;
            }
            apply.setLong(1, amount);
            apply.setInt(2, account);
            apply.executeUpdate();
            db.commit();
            return true;
        } finally {
            db.setAutoCommit(autoCommit);
        }
    }
    // end fencing:sql-idempotency-key

    /** A stalled holder's retry of an operation B already completed is refused by the key. */
    @Test
    void theIdempotencyKeyRefusesTheSameOperationTwice() throws Exception {
        try (Connection db = PostgresTransactionLocksTest.connect(server)) {
            assertTrue(applyOnce(db, "order-42", 3, 25), "B applies it");
            assertFalse(applyOnce(db, "order-42", 3, 25), "A's late copy must be refused");
            assertEquals(125, balance(db, 3));
        }
    }

    /**
     * The transaction-scoped mode with the fence column: the token is used by the writes of the
     * transaction that holds the lock, and a write with an older token is refused in it too.
     */
    @Test
    void theTransactionScopedModeFencesItsWritesWithItsToken() throws Exception {
        PostgresTransactionLocks locks = new PostgresTransactionLocks();
        try (LockClient leases = LockClient.open(LockClientConfig.builder(uri(server.port())).build());
             Connection db = PostgresTransactionLocksTest.connect(server)) {
            long older;
            try (Lease lease = leases.lock("account-4").tryAcquire().orElseThrow()) {
                older = lease.fencingToken();
            }
            // fencing:sql-transaction-scoped
            db.setAutoCommit(false);
            OptionalLong token = locks.tryLock(db, "account-4", Duration.ofSeconds(5));
            if (token.isPresent()) {
                writeBalance(db, 4, 90, token.getAsLong()); // the lock and the write commit together
                db.commit();
            } else {
                db.rollback();
            }
            // end fencing:sql-transaction-scoped
            assertTrue(token.isPresent());
            assertTrue(token.getAsLong() > older);
            assertFalse(writeBalance(db, 4, 10, older), "a write with an older token must be refused");
            db.commit();
            assertEquals(90, balance(db, 4));
        }
    }

    private static long balance(Connection db, int account) throws SQLException {
        return readBalance(db, account)[0];
    }
}
