package io.dlock.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockHolder;
import io.dlock.LockOptions;
import io.dlock.tck.TcpProxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The backend's statements against a real server: round trips, the table, tokens across a crash. */
class PostgresBackendTest {

    private static PostgresServer server;

    @BeforeAll
    static void start() {
        server = PostgresServer.start();
        PostgresFixture.setUp(server);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static String uri() {
        return server.uri(PostgresFixture.USER, PostgresFixture.PASSWORD, PostgresFixture.DATABASE);
    }

    private static String uriThrough(TcpProxy proxy) {
        return "postgresql://" + PostgresFixture.USER + ":" + PostgresFixture.PASSWORD + "@" + PostgresServer.HOST + ":"
                + proxy.address().getPort() + "/" + PostgresFixture.DATABASE;
    }

    /**
     * One statement, so one round trip, for each of acquire and release: counted by a proxy between
     * client and server, after a first cycle that opened the connection and checked the table.
     */
    @Test
    void uncontendedAcquireAndReleaseTakeTwoRoundTrips() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(server.address());
             LockClient client = LockClient.open(LockClientConfig.builder(uriThrough(proxy)).build())) {
            client.lock("rt-warm-up").tryAcquire().orElseThrow().release();
            Thread.sleep(100); // let the warm-up's traffic settle before reading the counter
            int cycles = 200;
            long before = proxy.roundTrips();
            for (int i = 0; i < cycles; i++) {
                try (Lease lease = client.lock("rt-" + (i % 10)).tryAcquire().orElseThrow()) {
                    assertTrue(lease.fencingToken() > 0);
                }
            }
            Thread.sleep(100);
            double perCycle = (proxy.roundTrips() - before) / (double) cycles;
            System.out.println("[postgres] round trips per uncontended acquire+release: " + perCycle);
            assertEquals(2.0, perCycle, 0.0001);
        }
    }

    /** A busy try answers the holder's remaining lease (the retry hint) and the holder query sees the row. */
    @Test
    void aBusyTryAndTheHolderQuerySeeTheServersLease() throws Exception {
        try (LockClient a = LockClient.open(uri()); LockClient b = LockClient.open(uri())) {
            LockOptions fiveSeconds = LockOptions.builder().leaseTime(Duration.ofSeconds(5)).build();
            try (Lease lease = a.lock("holder-q", fiveSeconds).tryAcquire().orElseThrow()) {
                assertFalse(b.lock("holder-q").tryAcquire().isPresent());
                Optional<LockHolder> h = b.holder("holder-q");
                assertTrue(h.isPresent());
                assertEquals(lease.fencingToken(), h.get().fencingToken());
                assertEquals(lease.ownerId(), h.get().ownerId());
                Duration left = h.get().remaining().orElseThrow();
                assertTrue(left.compareTo(Duration.ofSeconds(5)) <= 0 && left.compareTo(Duration.ZERO) > 0, left.toString());
            }
            assertTrue(b.holder("holder-q").isEmpty());
        }
        // a released lock leaves no row
        try (Connection c = server.superuser(PostgresFixture.DATABASE); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM public.dlock_locks WHERE name = 'holder-q'")) {
            rs.next();
            assertEquals(0, rs.getInt(1));
        }
    }

    /**
     * Tokens keep increasing across a SIGKILL of every server process and crash recovery: the
     * sequence's state is in the WAL that each grant's commit flushed (PostgreSQL logs sequence
     * values ahead, so after recovery the sequence may skip some, never repeat one).
     */
    @Test
    void tokensIncreaseAcrossAServerCrash() throws Exception {
        long before;
        try (LockClient c = LockClient.open(uri())) {
            for (int i = 0; i < 5; i++) {
                c.lock("crash-" + i).tryAcquire().orElseThrow().release();
            }
            before = c.lock("crash-last").tryAcquire().orElseThrow().fencingToken();
        }
        server.kill();
        server.restart();
        try (LockClient c = LockClient.open(uri())) {
            long after = c.lock("crash-after").tryAcquire(Duration.ofSeconds(10)).orElseThrow().fencingToken();
            assertTrue(after > before, "token after the crash " + after + " must exceed " + before);
        }
    }
}
