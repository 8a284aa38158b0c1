package io.dlock.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.ElectionListener;
import io.dlock.ElectionOptions;
import io.dlock.LeaderElection;
import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockConfigurationException;
import io.dlock.LockListener;
import io.dlock.LostReason;
import io.dlock.spi.BackendUri;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the core logs, read from the captured log: one warning per lost lease and per renewal
 * failure streak, each with the lock name, the token, the cause and the validity left; nothing
 * above DEBUG for operations that succeed; never a credential, at any level.
 */
class LoggingTest {

    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final String NAME = "payment:order-42";
    private static final String USER = "usr-admin-0042";
    private static final String PASSWORD = "pw-S3cr3t-4711";
    private static final String QUERY_SECRET = "qs-S3cr3t-0815";
    private static final String URI = "fake://" + USER + ":" + PASSWORD + "@db.example:6379/0?apiKey=" + QUERY_SECRET
            + "&region=eu";

    private Fixture f;

    @AfterEach
    void close() throws InterruptedException {
        if (f != null) {
            f.close();
        }
    }

    private Fixture fixture() {
        f = new Fixture(b -> b.uri(URI));
        return f;
    }

    /** Renewals fail as a backend's do: its message names the server by the redacted URI. */
    private void failRenewals() {
        String shown = f.backend.context.uri().toString();
        f.backend.renewFailure = () -> new LockBackendException("fake: no answer from " + shown + " within 5 s",
                null, null);
    }

    @Test
    void aRenewalFailureStreakIsOneWarningAndTheExpiryThatEndsItSaysWhy() {
        fixture();
        try (LogCapture log = LogCapture.everyLevel()) {
            DefaultLease<?> lease = f.acquire(NAME, LEASE, true);
            long token = lease.fencingToken();
            failRenewals();
            f.scheduler.advance(Duration.ofSeconds(40)); // fails at 10 s, retried every 2.5 s, expires at 29.68 s

            assertFalse(lease.isValid());
            assertTrue(f.listener.renewalFailed.size() >= 5, "retried: " + f.listener.renewalFailed.size());
            List<String> warnings = log.lines("WARN");
            assertEquals(2, warnings.size(), "one warning for the streak, one for the loss: " + warnings);
            assertEquals("[main] WARN io.dlock.Lease - dlock: renewal failed: lock '" + NAME + "' token " + token
                    + ", 19650 ms of validity left, retrying every 2500 ms until then; cause: LockBackendException: "
                    + "fake: no answer from fake://***:***@db.example:6379/0?apiKey=***&region=eu within 5 s",
                    warnings.get(0));
            assertEquals("[main] WARN io.dlock.Lease - dlock: lease lost: lock '" + NAME + "' token " + token
                    + ", reason EXPIRED, 0 ms of validity left (lease time 30000 ms, held for 29650 ms); cause: "
                    + "renewal failing for 19650 ms (" + f.listener.renewalFailed.size() + " attempt(s)), last: "
                    + "LockBackendException: fake: no answer from fake://***:***@db.example:6379/0?apiKey=***"
                    + "&region=eu within 5 s", warnings.get(1));
            assertEquals(f.listener.renewalFailed.size() - 1,
                    log.lines("DEBUG").stream().filter(l -> l.contains("renewal failed again")).count(),
                    "the retries are at DEBUG");
            assertTrue(log.lines("INFO").isEmpty(), log.text());
        }
    }

    @Test
    void aRenewalThatRecoversSaysSoOnceAtInfo() {
        fixture();
        try (LogCapture log = LogCapture.everyLevel()) {
            DefaultLease<?> lease = f.acquire(NAME, LEASE, true);
            f.backend.renewThrows = true;
            f.scheduler.advance(Duration.ofSeconds(14)); // fails at 10 s and 12.5 s
            f.backend.renewThrows = false;
            f.scheduler.advance(Duration.ofSeconds(30)); // renewed at 15 s, and on

            assertTrue(lease.isValid());
            assertEquals(1, log.lines("WARN").size(), log.text());
            assertEquals(List.of("[main] INFO io.dlock.Lease - dlock: renewal recovered: lock '" + NAME + "' token "
                    + lease.fencingToken() + " renewed after 2 failed attempt(s) over 5000 ms; 29650 ms of validity "
                    + "left"), log.lines("INFO"));
        }
    }

    @Test
    void aSupersededLeaseAndASessionLossSayWhatHappenedAndHowMuchValidityWasLeft() {
        fixture();
        try (LogCapture log = LogCapture.everyLevel()) {
            DefaultLease<?> a = f.acquire("a", LEASE, true);
            DefaultLease<?> b = f.acquire("b", LEASE, true);
            f.backend.renewNotOwner = "a"::equals;
            f.scheduler.advance(Duration.ofSeconds(10));
            f.scheduler.advance(Duration.ofSeconds(2));
            f.backend.context.events().allLeasesLost(LostReason.SESSION_LOST);

            assertFalse(a.isValid());
            assertFalse(b.isValid());
            List<String> warnings = log.lines("WARN");
            assertEquals(2, warnings.size(), warnings.toString());
            assertTrue(warnings.get(0).endsWith("dlock: lease lost: lock 'a' token " + a.fencingToken()
                    + ", reason SUPERSEDED, 19650 ms of validity left (lease time 30000 ms, held for 10000 ms); cause: "
                    + "the backend answered that this owner no longer holds the lock (its server-side lease ended or "
                    + "the lock was taken over)"), warnings.get(0));
            // b was renewed at 10 s: valid until 39.68 s
            assertTrue(warnings.get(1).endsWith("dlock: lease lost: lock 'b' token " + b.fencingToken()
                    + ", reason SESSION_LOST, 27650 ms of validity left (lease time 30000 ms, held for 12000 ms); "
                    + "cause: the backend's session that vouched for the lease ended or can no longer be trusted "
                    + "(see the backend's warning before this line)"), warnings.get(1));
        }
    }

    /**
     * A lease that expires while its renewal waits for an answer (a paused server, say) says so: a
     * renewal went out and nothing came back. It used to blame "a GC pause" of this process, which
     * is one of the possibilities but not what is known.
     */
    @Test
    void anExpiryWhileARenewalGoesUnansweredSaysThatNotAGcPause() throws Exception {
        ExecutorService worker = Executors.newCachedThreadPool();
        f = new Fixture(UnaryOperator.identity(), worker);
        try (LogCapture log = LogCapture.everyLevel()) {
            DefaultLease lease = f.acquire(NAME, LEASE, true);
            CountDownLatch gate = new CountDownLatch(1);
            f.backend.renewGate = gate; // the server takes the request and never answers
            f.scheduler.advance(Duration.ofSeconds(10)); // the renewal is sent at 10 s, on the worker
            assertTrue(f.backend.renewEntered.await(10, TimeUnit.SECONDS));
            f.scheduler.advance(Duration.ofSeconds(20)); // validity ends at 29.65 s

            assertFalse(lease.isValid());
            List<String> warnings = log.lines("WARN");
            assertEquals(1, warnings.size(), warnings.toString());
            assertTrue(warnings.get(0).endsWith("dlock: lease lost: lock '" + NAME + "' token " + lease.fencingToken()
                    + ", reason EXPIRED, 0 ms of validity left (lease time 30000 ms, held for 29650 ms); cause: no "
                    + "answer to the renewal sent 19650 ms earlier: the server, the network to it, or this process "
                    + "stalled (a paused or overloaded server, lost packets, a long GC pause)"), warnings.get(0));
            gate.countDown();
        }
    }

    /** A lease whose renewal was never even sent: only then is this process the one to blame. */
    @Test
    void anExpiryWithoutARenewalSentBlamesThisProcess() throws Exception {
        ExecutorService stuck = Executors.newSingleThreadExecutor();
        CountDownLatch busy = new CountDownLatch(1);
        stuck.execute(() -> {
            try {
                busy.await(10, TimeUnit.SECONDS); // the only worker is busy: renewal passes wait behind it
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        f = new Fixture(UnaryOperator.identity(), stuck);
        try (LogCapture log = LogCapture.everyLevel()) {
            DefaultLease lease = f.acquire(NAME, LEASE, true);
            f.scheduler.advance(Duration.ofSeconds(30));

            assertFalse(lease.isValid());
            assertTrue(f.backend.renewCalls.isEmpty(), "no renewal was sent");
            List<String> warnings = log.lines("WARN");
            assertEquals(1, warnings.size(), warnings.toString());
            assertTrue(warnings.get(0).endsWith("cause: no renewal was sent in the 29650 ms since the last one "
                    + "succeeded (one was due every 10000 ms): this process stalled (a long GC pause, CPU starvation, "
                    + "a suspended VM) or its worker threads were all busy"), warnings.get(0));
        } finally {
            busy.countDown();
        }
    }

    @Test
    void operationsThatSucceedLogNothingAboveDebug() throws Exception {
        fixture();
        try (LogCapture log = LogCapture.everyLevel()) {
            for (int i = 0; i < 3; i++) {
                try (Lease lease = f.acquire(NAME, LEASE, true)) {
                    f.scheduler.advance(Duration.ofSeconds(25)); // two renewals
                    assertTrue(lease.isValid());
                    assertEquals(Optional.empty(), f.client.lock(NAME).tryAcquire()); // contended: not an error
                }
            }
            assertTrue(f.client.lock(NAME).withLock(Duration.ofSeconds(1), l -> { }));
            f.backend.grabAsOther("busy", LEASE);
            assertEquals(Optional.empty(), f.client.lock("busy").tryAcquire(Duration.ofSeconds(1))); // timed out

            assertEquals(List.of(), log.lines("INFO"));
            assertEquals(List.of(), log.lines("WARN"));
            assertEquals(List.of(), log.lines("ERROR"));
        }
    }

    @Test
    void credentialsNeverAppearInTheLogAtAnyLevel() throws Exception {
        fixture();
        String text;
        try (LogCapture log = LogCapture.everyLevel()) {
            // renewal failures, a streak that recovers, one that ends in expiry
            DefaultLease<?> a = f.acquire("a", LEASE, true);
            f.backend.renewThrows = true;
            f.scheduler.advance(Duration.ofSeconds(12));
            f.backend.renewThrows = false;
            f.scheduler.advance(Duration.ofSeconds(5));
            failRenewals();
            f.scheduler.advance(LEASE);
            assertFalse(a.isValid());
            // a superseded lease, a failed release, a failed acquire
            DefaultLease<?> b = f.acquire("b", LEASE, true);
            f.backend.renewFailure = null;
            f.backend.renewNotOwner = "b"::equals;
            f.scheduler.advance(Duration.ofSeconds(10));
            assertFalse(b.isValid());
            DefaultLease<?> c = f.acquire("c", LEASE, false);
            f.backend.releaseThrows = true;
            c.release();
            f.backend.tryOnceFailure = () -> new LockBackendException("fake: cannot reach "
                    + f.backend.context.uri(), "d", null);
            assertThrows(LockBackendException.class, () -> f.client.lock("d").tryAcquire());
            // a listener that throws, and one whose forClient throws
            Fixture throwing = new Fixture(cfg -> cfg.uri(URI).listener(new LockListener() {
                @Override
                public LockListener forClient(String providerName) {
                    throw new IllegalStateException("no registry");
                }

                @Override
                public void released(String lockName, long fencingToken, Duration held) {
                    throw new IllegalStateException("metrics down");
                }
            }));
            throwing.acquire("e", LEASE, false).release();
            throwing.close();
            // opening through ServiceLoader, a backend that cannot be reached
            LockBackendException failed = assertThrows(LockBackendException.class,
                    () -> LockClient.open(LockClientConfig.builder(URI.replace("&region", "&failOpen=1&region")).build()));
            assertFalse(failed.getMessage().contains(PASSWORD), failed.getMessage());
            try (LockClient client = LockClient.open(URI)) {
                assertFalse(client.toString().contains(PASSWORD), client.toString());
                assertFalse(client.config().toString().contains(PASSWORD), client.config().toString());
            }
            text = log.text();
        }
        assertTrue(text.contains("lease lost"), text);
        assertTrue(text.contains("renewal failed"), text);
        assertTrue(text.contains("renewal recovered"), text);
        assertTrue(text.contains("release of lock 'c'"), text);
        assertTrue(text.contains(BackendUri.redact(URI)), "backend messages with the redacted URI are logged: " + text);
        assertFalse(text.contains(PASSWORD), text);
        assertFalse(text.contains(USER), text);
        assertFalse(text.contains(QUERY_SECRET), text);
    }

    @Test
    void anElectionSaysWhenItsBackendRefusesTheConfigurationAndWhenItIsOnlyUnreachable() throws Exception {
        fixture();
        LockConfigurationException refused = new LockConfigurationException(LockConfigurationException.Kind.CREDENTIALS,
                "fake: the server rejected the credentials", "leader", null);
        LockBackendException unreachable = new LockBackendException("fake: no answer within 5 s", "leader", null);
        List<String> warnings;
        List<String> infos;
        try (LogCapture log = LogCapture.everyLevel()) {
            f.backend.tryOnceFailure = () -> refused;
            try (LeaderElection election = LeaderElection.create(f.client, "leader",
                    ElectionOptions.builder().retryDelay(Duration.ofMillis(20)).build(), ElectionListener.NONE)) {
                election.start();
                Fixture.waitFor("three failed tries", () -> f.backend.tryOnceCalls.get() >= 3);
                f.backend.tryOnceFailure = () -> unreachable;
                int before = f.backend.tryOnceCalls.get();
                Fixture.waitFor("three more", () -> f.backend.tryOnceCalls.get() >= before + 3);
                f.backend.tryOnceFailure = null;
                Fixture.waitFor("elected", election::isLeader);
            }
            warnings = log.lines("WARN");
            infos = log.lines("INFO");
        }
        assertEquals(2, warnings.size(), "one warning per streak of one kind: " + warnings);
        assertTrue(warnings.get(0).endsWith("dlock: election 'leader' cannot contend: its backend refuses the "
                + "configuration (CREDENTIALS), which retrying does not change; fix it (the election retries every "
                + "PT0.02S): fake: the server rejected the credentials"), warnings.get(0));
        assertTrue(warnings.get(1).endsWith("dlock: election 'leader' cannot reach its backend, retrying every PT0.02S: "
                + "fake: no answer within 5 s"), warnings.get(1));
        assertTrue(infos.stream().anyMatch(l -> l.endsWith("dlock: election 'leader' reaches its backend again")), infos.toString());
    }
}
