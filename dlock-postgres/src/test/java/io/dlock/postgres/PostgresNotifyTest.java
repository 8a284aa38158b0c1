package io.dlock.postgres;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockClientConfig;
import io.dlock.LostReason;
import io.dlock.postgres.internal.PgLockBackend;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.BackendUri;
import io.dlock.spi.Grant;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.support.Ids;
import io.dlock.tck.SpiAnswers;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Waiters are told by {@code LISTEN/NOTIFY}: through the SPI, a waiting attempt's {@code turn}
 * stage, awaited for up to 20 s as the core does, completes soon after another client's release,
 * and one that hears nothing does not complete.
 */
class PostgresNotifyTest {

    private static PostgresServer server;

    @BeforeAll
    static void start() {
        server = PostgresServer.start();
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
        String uri = server.uri(PostgresServer.SUPERUSER, PostgresServer.SUPERUSER_PASSWORD, "postgres");
        LockClientConfig config = LockClientConfig.builder(uri).operationTimeout(Duration.ofSeconds(5)).build();
        return PgLockBackend.open(new BackendContext(config, BackendUri.parse(uri), r -> {
            Thread t = new Thread(r, "test-pg-notify");
            t.setDaemon(true);
            return t;
        }, NO_EVENTS), null);
    }

    @Test
    void aWaiterIsWokenByTheReleaseNotNotByItsBound() throws Exception {
        ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
        try (PgLockBackend holderSide = open(); PgLockBackend waiterSide = open()) {
            AcquireRequest held = new AcquireRequest("notify-me", Ids.ownerId(), Duration.ofSeconds(30));
            AttemptResult.Granted<Void> granted = assertInstanceOf(AttemptResult.Granted.class,
                    holderSide.newAttempt(held).tryOnce());
            Grant<Void> grant = Grant.of(held, granted);

            AcquireAttempt<Void> waiter = waiterSide.newAttempt(new AcquireRequest("notify-me", Ids.ownerId(),
                    Duration.ofSeconds(30)));
            assertInstanceOf(AttemptResult.Busy.class, waiter.tryOnce());
            assertTrue(SpiAnswers.awaitTurn(waiter, Duration.ofSeconds(20)), "listening"); // the first turn only starts listening
            assertInstanceOf(AttemptResult.Busy.class, waiter.tryOnce());

            later.schedule(() -> holderSide.release(grant), 300, TimeUnit.MILLISECONDS);
            long t0 = System.nanoTime();
            assertTrue(SpiAnswers.awaitTurn(waiter, Duration.ofSeconds(20)), "no notice within 20 s");
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            System.out.println("[postgres] a waiter woke " + tookMs + " ms after starting to wait (release at 300 ms)");
            // generous: the release comes at 300 ms; a poll would only come at the 20 s bound
            assertTrue(tookMs < 10_000, "woken after " + tookMs + " ms: not by the notice");
            assertInstanceOf(AttemptResult.Granted.class, waiter.tryOnce());
        } finally {
            later.shutdownNow();
        }
    }

    @Test
    void aWaiterThatHearsNothingReturnsAtItsBound() throws Exception {
        try (PgLockBackend holderSide = open(); PgLockBackend waiterSide = open()) {
            AcquireRequest held = new AcquireRequest("never-released", Ids.ownerId(), Duration.ofSeconds(30));
            AttemptResult<Void> r = holderSide.newAttempt(held).tryOnce();
            assertInstanceOf(AttemptResult.Granted.class, r);
            AcquireAttempt<Void> waiter = waiterSide.newAttempt(new AcquireRequest("never-released", Ids.ownerId(),
                    Duration.ofSeconds(30)));
            AttemptResult<Void> busy = waiter.tryOnce();
            assertInstanceOf(AttemptResult.Busy.class, busy);
            // the retry hint is the holder's lease left on the server's clock
            Duration hint = ((AttemptResult.Busy<Void>) busy).retryAfter().orElseThrow();
            assertTrue(hint.compareTo(Duration.ofSeconds(30)) <= 0 && hint.compareTo(Duration.ofSeconds(20)) > 0,
                    hint.toString());
            assertTrue(SpiAnswers.awaitTurn(waiter, Duration.ofSeconds(20)), "listening"); // the first turn only starts listening
            assertInstanceOf(AttemptResult.Busy.class, waiter.tryOnce()); // as the core does between waits
            long t0 = System.nanoTime();
            assertFalse(SpiAnswers.awaitTurn(waiter, Duration.ofMillis(500)), "the stage completed without a notice");
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(tookMs >= 450, "returned after " + tookMs + " ms without a notice");
            waiter.abandon();
            assertTrue(holderSide.release(Grant.of(held, (AttemptResult.Granted<Void>) r)) == ReleaseOutcome.RELEASED);
        }
    }
}
