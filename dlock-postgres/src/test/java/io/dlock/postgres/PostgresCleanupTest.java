package io.dlock.postgres;

import static io.dlock.tck.SpiAnswers.grant;
import static io.dlock.tck.SpiAnswers.isGranted;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockBackendException;
import io.dlock.LockClientConfig;
import io.dlock.LostReason;
import io.dlock.postgres.internal.PgLockBackend;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.BackendUri;
import io.dlock.spi.Grant;
import io.dlock.spi.support.Ids;
import io.dlock.tck.NetworkFault;
import io.dlock.tck.TcpProxy;
import io.dlock.tck.TestTiming;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A clean-up whose request is lost (a release, or the undo of a failed acquire) is retried in the
 * background (the support kit's {@code RetryingCleaner}), so the lock is free soon after the
 * network heals, not only when its 30 s lease ends.
 */
class PostgresCleanupTest {

    /** Generous for a loaded machine; each call's own bound is the 1 s operation timeout. */
    private static final Duration FAIL_BOUND = Duration.ofSeconds(10);

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

    private static PgLockBackend open(TcpProxy proxy) {
        String uri = "postgresql://" + PostgresFixture.USER + ":" + PostgresFixture.PASSWORD + "@" + PostgresServer.HOST
                + ":" + proxy.address().getPort() + "/" + PostgresFixture.DATABASE;
        LockClientConfig config = LockClientConfig.builder(uri).operationTimeout(Duration.ofSeconds(1)).build();
        return PgLockBackend.open(new BackendContext(config, BackendUri.parse(uri), r -> {
            Thread t = new Thread(r, "test-pg-cleanup");
            t.setDaemon(true);
            return t;
        }, NO_EVENTS), null);
    }

    private static boolean rowExists(String name) {
        try (Connection c = server.superuser(PostgresFixture.DATABASE);
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM public.dlock_locks WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) > 0;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Before: the row stayed until its 30 s lease ended. */
    @Test
    void aReleaseThatGetsNoAnswerIsRetriedInTheBackground() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(server.address()); PgLockBackend backend = open(proxy)) {
            AcquireRequest r = new AcquireRequest("lost-release", Ids.ownerId(), Duration.ofSeconds(30));
            Grant<Void> grant = grant(r, backend.newAttempt(r).tryOnce());
            proxy.inject(NetworkFault.BLACK_HOLE);
            try {
                TestTiming.assertThrowsWithin(LockBackendException.class, FAIL_BOUND, () -> backend.release(grant));
                assertTrue(rowExists("lost-release"), "the dropped release did not reach the server");
            } finally {
                proxy.heal();
            }
            TestTiming.await("the release was retried once the network healed", FAIL_BOUND,
                    () -> !rowExists("lost-release"));
        }
    }

    /**
     * An acquire whose answer was lost, then an undo that gets nowhere either. Before: abandon
     * tried once, and the row stayed until its 30 s lease ended.
     */
    @Test
    void anUndoThatFailsIsRetriedInTheBackground() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(server.address()); PgLockBackend backend = open(proxy)) {
            AcquireRequest r = new AcquireRequest("lost-undo", Ids.ownerId(), Duration.ofSeconds(30));
            assertTrue(isGranted(backend.newAttempt(new AcquireRequest("warm", Ids.ownerId(), Duration.ofSeconds(30)))
                    .tryOnce()));
            AcquireAttempt<Void> attempt = backend.newAttempt(r);
            proxy.inject(NetworkFault.DROP_ANSWERS); // the grant is made, its answer lost
            try {
                TestTiming.assertThrowsWithin(LockBackendException.class, FAIL_BOUND, attempt::tryOnce);
            } finally {
                proxy.heal();
            }
            TestTiming.await("the acquire whose answer was lost was applied", FAIL_BOUND, () -> rowExists("lost-undo"));
            proxy.inject(NetworkFault.BLACK_HOLE);
            try {
                attempt.abandon(); // fails: nothing gets through; never throws
                assertTrue(rowExists("lost-undo"), "the dropped undo did not reach the server");
            } finally {
                proxy.heal();
            }
            TestTiming.await("the undo was retried once the network healed", FAIL_BOUND, () -> !rowExists("lost-undo"));
        }
    }
}
