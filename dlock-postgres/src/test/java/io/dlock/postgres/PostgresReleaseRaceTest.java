package io.dlock.postgres;

import static io.dlock.tck.SpiAnswers.grant;
import static io.dlock.tck.SpiAnswers.isGranted;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockClientConfig;
import io.dlock.LostReason;
import io.dlock.postgres.internal.PgLockBackend;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.BackendUri;
import io.dlock.spi.Grant;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.support.Ids;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Races of a release with other statements on the same row. First: a waiter takes the place next
 * in line while the release waits for the row; the release must still release (before, it was
 * two sub-statements, a DELETE if no live ticket and an UPDATE if one, and the UPDATE, whose
 * condition was false on the statement's snapshot, never looked again: the release answered "not
 * held" and the lock stayed held by nobody for a whole lease). Second: a release that hands the lock to the waiter next in line ends the row's lease instead of
 * deleting it; a renewal of the same grant that started before the release, and waited for the
 * row while the release ran, then re-checks the row against its own (earlier) {@code now()}.
 * Before, the release wrote {@code expires_at = now()}, which such a renewal saw as still live and
 * extended by a whole lease: the released lock stayed held by nobody for a lease time (seen in
 * dlock-bench's hand-off workload as waits of exactly the 4 s lease). Now the lease is ended at a
 * fixed time in the past, which no statement can see as live.
 */
class PostgresReleaseRaceTest {

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

    private static final BackendEvents NO_EVENTS = new BackendEvents() {
        @Override
        public void allLeasesLost(LostReason reason) {
        }

        @Override
        public void leaseLost(String ownerId, LostReason reason) {
        }
    };

    private static PgLockBackend open() {
        String uri = server.uri(PostgresFixture.USER, PostgresFixture.PASSWORD, PostgresFixture.DATABASE);
        LockClientConfig config = LockClientConfig.builder(uri).operationTimeout(Duration.ofSeconds(5)).build();
        return PgLockBackend.open(new BackendContext(config, BackendUri.parse(uri), r -> {
            Thread t = new Thread(r, "test-pg-race");
            t.setDaemon(true);
            return t;
        }, NO_EVENTS), null);
    }

    @Test
    void aReleaseStillReleasesWhenAWaiterTakesTheTicketWhileItWaitsForTheRow() throws Exception {
        try (PgLockBackend backend = open(); Connection waiter = PostgresTransactionLocksTest.connect(server)) {
            AcquireRequest r = new AcquireRequest("race-ticket", Ids.ownerId(), Duration.ofSeconds(30));
            Grant<Void> g = grant(r, backend.newAttempt(r).tryOnce());
            // a waiter's try taking the ticket, holding the row while the release arrives
            waiter.setAutoCommit(false);
            try (Statement s = waiter.createStatement()) {
                s.executeUpdate("UPDATE public.dlock_locks SET waiter = 'w', waiter_since = 1,"
                        + " waiter_until = now() + interval '30 seconds' WHERE name = 'race-ticket'");
            }
            java.util.concurrent.CompletableFuture<ReleaseOutcome> release =
                    java.util.concurrent.CompletableFuture.supplyAsync(() -> backend.release(g));
            Thread.sleep(300); // the release's statement is waiting for the row (it cannot be seen from here)
            assertFalse(release.isDone());
            waiter.commit();
            assertEquals(ReleaseOutcome.RELEASED, release.get(10, java.util.concurrent.TimeUnit.SECONDS));
            try (Statement s = waiter.createStatement(); ResultSet rs = s.executeQuery("SELECT waiter,"
                    + " expires_at <= now() FROM public.dlock_locks WHERE name = 'race-ticket'")) {
                assertTrue(rs.next(), "the row stays for the waiter next in line");
                assertEquals("w", rs.getString(1));
                assertTrue(rs.getBoolean(2), "its lease ended");
            }
            waiter.commit();
            assertTrue(backend.holder("race-ticket").isEmpty());
        }
    }

    @Test
    void aRenewalOlderThanAHandedOverReleaseCannotReviveTheLease() throws Exception {
        try (PgLockBackend holderSide = open(); PgLockBackend waiterSide = open();
             Connection renewal = PostgresTransactionLocksTest.connect(server)) {
            AcquireRequest r = new AcquireRequest("race", Ids.ownerId(), Duration.ofSeconds(30));
            Grant<Void> g = grant(r, holderSide.newAttempt(r).tryOnce());
            // a waiter asks twice, so it holds the place next in line: the release will hand over
            AcquireAttempt<Void> waiter = waiterSide.newAttempt(new AcquireRequest("race", Ids.ownerId(),
                    Duration.ofSeconds(30)));
            assertFalse(isGranted(waiter.tryOnce()));
            io.dlock.tck.SpiAnswers.awaitTurn(waiter, Duration.ofMillis(50));
            assertFalse(isGranted(waiter.tryOnce()));
            // the renewal's transaction starts (its now()) before the release, as a renewal statement
            // that was sent first and then waited for the row the release held
            renewal.setAutoCommit(false);
            try (Statement s = renewal.createStatement()) {
                s.execute("SELECT now()");
            }
            Thread.sleep(20);
            assertEquals(ReleaseOutcome.RELEASED, holderSide.release(g));
            int renewed;
            // the backend's renewal condition: owner, token, and a lease still live at the statement's now()
            try (PreparedStatement ps = renewal.prepareStatement("UPDATE public.dlock_locks SET expires_at = now()"
                    + " + interval '30 seconds' WHERE name = ? AND owner = ? AND token = ? AND expires_at > now()")) {
                ps.setString(1, "race");
                ps.setString(2, g.ownerId());
                ps.setLong(3, g.fencingToken());
                renewed = ps.executeUpdate();
            }
            renewal.commit();
            assertEquals(0, renewed, "a renewal older than the release revived the released lease");
            assertTrue(isGranted(waiter.tryOnce()), "the waiter next in line gets the lock");
        }
    }
}
