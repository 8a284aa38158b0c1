package io.dlock.redis;

import static io.dlock.tck.SpiAnswers.*;

import io.dlock.tck.TestTiming;

import static io.dlock.tck.TestTiming.await;
import static io.dlock.redis.TestSupport.openBackend;
import static io.dlock.redis.TestSupport.request;
import static io.dlock.redis.TestSupport.scriptCalls;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Capability;
import io.dlock.LockBackendException;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.LockHolder;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.RenewOutcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/** The backend through the SPI, as the core drives it, against a real redis-server. */
class RedisBackendTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final Duration LONG_LEASE = Duration.ofSeconds(10);

    private static RedisServer server;
    private static Jedis jedis;
    private final List<LockBackend<Void>> backends = new ArrayList<>();

    @BeforeAll
    static void startServer() {
        server = RedisServer.start();
        jedis = TestSupport.jedis(server);
    }

    @AfterAll
    static void stopServer() {
        if (jedis != null) {
            jedis.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void flush() {
        jedis.flushAll();
        server.markLockDelayPassed(0, RedisServer.DEFAULT_PREFIX); // the flush took the lock-delay marker too
    }

    @AfterEach
    void closeBackends() {
        backends.forEach(LockBackend::close);
    }

    private LockBackend<Void> backend() {
        LockBackend<Void> b = openBackend(server.uri(), TIMEOUT);
        backends.add(b);
        return b;
    }

    @Test
    void declaresFencingNotifyHolderAndEmptyRestartButNotFairnessOrFailover() {
        LockBackend<Void> b = backend();
        assertEquals(java.util.EnumSet.of(Capability.FENCING, Capability.NOTIFY_WAITERS, Capability.HOLDER_QUERY,
                Capability.SURVIVES_EMPTY_RESTART), b.capabilities());
        assertEquals(Duration.ofMillis(10), b.minimumLeaseTime());
        assertEquals(Duration.ofSeconds(30), b.maximumLeaseTime(), "the default lock-delay bounds leases");
        assertTrue(b.toString().contains(server.uri()), b.toString());
    }

    @Test
    void anUncontendedAcquireAndReleaseAreTwoScriptCallsWithTheLockDelayChecked() {
        LockBackend<Void> a = backend();
        assertTrue(a.capabilities().contains(Capability.SURVIVES_EMPTY_RESTART));
        AcquireRequest warm = request("two-calls-warm", LONG_LEASE); // the scripts are cached after this
        assertTrue(released(a.release(grant(warm, a.newAttempt(warm).tryOnce()))));
        long before = scriptCalls(jedis);
        AcquireRequest r = request("two-calls", LONG_LEASE);
        AttemptResult<Void> g = a.newAttempt(r).tryOnce();
        assertTrue(isGranted(g));
        assertTrue(released(a.release(grant(r, g))));
        // the lock-delay marker is checked inside the acquire script: no request of its own
        assertEquals(2, scriptCalls(jedis) - before);
    }

    @Test
    void acquireRenewReleaseCycle() {
        LockBackend<Void> a = backend();
        LockBackend<Void> b = backend();
        AcquireRequest ra = request("cycle", Duration.ofSeconds(3));
        AttemptResult<Void> ga = a.newAttempt(ra).tryOnce();
        assertTrue(isGranted(ga));
        assertTrue(token(ga) > 0);
        assertEquals(ra.ownerId() + ":" + token(ga), jedis.get("dlock:lock:cycle"));
        long pttl = jedis.pttl("dlock:lock:cycle");
        assertTrue(pttl > 0 && pttl <= 3000, "pttl " + pttl);

        AcquireAttempt<Void> other = b.newAttempt(request("cycle", Duration.ofSeconds(3)));
        AttemptResult<Void> busy = other.tryOnce();
        assertFalse(isGranted(busy));
        Duration hint = ((AttemptResult.Busy<Void>) busy).retryAfter().orElseThrow();
        assertTrue(!hint.isNegative() && hint.compareTo(Duration.ofSeconds(3)) <= 0, "hint " + hint);
        other.abandon();

        Grant<Void> lease = grant(ra, ga);
        jedis.pexpire("dlock:lock:cycle", 500);
        assertArrayEquals(new boolean[] {true}, renewed(a.renew(List.of(lease))));
        assertTrue(jedis.pttl("dlock:lock:cycle") > 2000, "renewal restores the full lease time");

        assertTrue(released(a.release(lease)));
        assertFalse(jedis.exists("dlock:lock:cycle"));
        assertFalse(released(a.release(lease)), "a second release finds nothing to release");
        assertArrayEquals(new boolean[] {false}, renewed(a.renew(List.of(lease))), "a released lease cannot be renewed");

        AcquireRequest rb = request("cycle", Duration.ofSeconds(3));
        AttemptResult<Void> gb = b.newAttempt(rb).tryOnce();
        assertTrue(isGranted(gb));
        assertTrue(token(gb) > token(ga));
    }

    @Test
    void tokensStrictlyIncreaseAcrossBackendsAndNames() {
        List<LockBackend<Void>> clients = List.of(backend(), backend(), backend());
        long last = 0;
        for (int i = 0; i < 30; i++) {
            LockBackend<Void> c = clients.get(i % clients.size());
            AcquireRequest r = request(i % 2 == 0 ? "tokens-a" : "tokens-b", LONG_LEASE);
            AttemptResult<Void> g = c.newAttempt(r).tryOnce();
            assertTrue(isGranted(g));
            assertTrue(token(g) > last, "token " + token(g) + " after " + last);
            last = token(g);
            assertTrue(released(c.release(grant(r, g))));
        }
    }

    @Test
    void firstTokenIsSeededFromTheServerClockInMicroseconds() {
        List<String> time = jedis.time();
        long micros = Long.parseLong(time.get(0)) * 1_000_000L + Long.parseLong(time.get(1));
        AttemptResult<Void> g = backend().newAttempt(request("seed", LONG_LEASE)).tryOnce();
        // the counter key was missing (flushed), so the token starts at the server's time
        assertTrue(token(g) > micros, token(g) + " vs " + micros);
        assertTrue(token(g) < micros + 60_000_000L, token(g) + " vs " + micros);
    }

    @Test
    void staleReleaseAndRenewDoNotAffectTheNewHolder() {
        LockBackend<Void> a = backend();
        LockBackend<Void> b = backend();
        AcquireRequest ra = request("stale", Duration.ofMillis(100));
        AttemptResult<Void> ga = a.newAttempt(ra).tryOnce();
        assertTrue(isGranted(ga));
        // the first lease expires on the server
        await("the first lease expired", Duration.ofSeconds(5), () -> !jedis.exists("dlock:lock:stale"));

        AcquireRequest rb = request("stale", LONG_LEASE);
        AttemptResult<Void> gb = b.newAttempt(rb).tryOnce();
        assertTrue(isGranted(gb));
        assertTrue(token(gb) > token(ga));

        Grant<Void> stale = grant(ra, ga);
        assertArrayEquals(new boolean[] {false}, renewed(a.renew(List.of(stale))));
        assertFalse(released(a.release(stale)));
        // even a stale lease with the right owner id but an old token is refused
        Grant<Void> forged = new Grant<>("stale", rb.ownerId(), token(ga), LONG_LEASE, null);
        assertFalse(released(a.release(forged)));

        LockHolder holder = b.holder("stale").orElseThrow();
        assertEquals(rb.ownerId(), holder.ownerId());
        assertEquals(token(gb), holder.fencingToken());
        long pttl = jedis.pttl("dlock:lock:stale");
        assertTrue(pttl > 5000, "the new holder's lease is untouched: pttl " + pttl);
        assertArrayEquals(new boolean[] {true}, renewed(b.renew(List.of(grant(rb, gb)))));
        assertTrue(released(b.release(grant(rb, gb))));
    }

    @Test
    void renewsThreeHundredLeasesInOneScriptCall() {
        LockBackend<Void> a = backend();
        LockBackend<Void> b = backend();
        List<Grant<Void>> leases = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            AcquireRequest r = request("batch-" + i, Duration.ofSeconds(20));
            AttemptResult<Void> g = a.newAttempt(r).tryOnce();
            assertTrue(isGranted(g));
            leases.add(grant(r, g));
            jedis.pexpire("dlock:lock:batch-" + i, 5_000);
        }
        // one lease lost to another owner in between: the batch must say so for that one only
        jedis.del("dlock:lock:batch-7");
        AcquireRequest thief = request("batch-7", Duration.ofSeconds(20));
        assertTrue(isGranted(b.newAttempt(thief).tryOnce()));

        long before = scriptCalls(jedis);
        boolean[] renewed = renewed(a.renew(leases));
        long calls = scriptCalls(jedis) - before;

        assertEquals(1, calls, "one script call renews the whole batch");
        assertEquals(300, renewed.length);
        for (int i = 0; i < 300; i++) {
            assertEquals(i != 7, renewed[i], "lease " + i);
            if (i != 7) {
                long pttl = jedis.pttl("dlock:lock:batch-" + i);
                assertTrue(pttl > 15_000, "lease " + i + " renewed to its lease time, pttl " + pttl);
            }
        }
        assertTrue(jedis.get("dlock:lock:batch-7").startsWith(thief.ownerId() + ":"), "the thief still holds it");
        assertArrayEquals(new boolean[0], renewed(a.renew(List.of())));
    }

    @Test
    void aFailedScriptCallMakesOnlyItsOwnLeasesUnknown() {
        LockBackend<Void> a = backend();
        List<Grant<Void>> leases = new ArrayList<>();
        for (int i = 0; i < 600; i++) { // two script calls: 512 leases, then 88
            AcquireRequest r = request("partial-" + i, Duration.ofSeconds(20));
            leases.add(grant(r, a.newAttempt(r).tryOnce()));
        }
        // a key of the wrong type makes the second call's script fail: its outcome is unknown
        jedis.del("dlock:lock:partial-550");
        jedis.hset("dlock:lock:partial-550", "not", "a lock");

        List<RenewOutcome> outcomes = a.renew(leases);

        assertEquals(600, outcomes.size());
        for (int i = 0; i < 512; i++) {
            assertInstanceOf(RenewOutcome.Renewed.class, outcomes.get(i), "lease " + i + ", in the call that answered");
        }
        for (int i = 512; i < 600; i++) {
            RenewOutcome.Unknown unknown = assertInstanceOf(RenewOutcome.Unknown.class, outcomes.get(i), "lease " + i);
            assertTrue(unknown.cause().getMessage().contains("renewal of 88 leases"), unknown.cause().getMessage());
        }
        jedis.del("dlock:lock:partial-550");
    }

    @Test
    void releasedLocksLeaveNoPerNameState() {
        LockBackend<Void> a = backend();
        for (int i = 0; i < 1000; i++) {
            AcquireRequest r = request("bounded-" + i, LONG_LEASE);
            AttemptResult<Void> g = a.newAttempt(r).tryOnce();
            assertTrue(isGranted(g));
            assertTrue(released(a.release(grant(r, g))));
        }
        // only the one shared counter and the lock-delay marker remain
        assertEquals(2, jedis.dbSize(), "keys: " + jedis.keys("*"));
        assertTrue(jedis.exists("dlock:fence"));
        assertTrue(jedis.exists("dlock:epoch"));
    }

    @Test
    void aTurnCompletesPromptlyOnRelease() throws Exception {
        LockBackend<Void> holderBackend = backend();
        LockBackend<Void> waiterBackend = backend();
        AcquireRequest rh = request("wake", LONG_LEASE);
        AttemptResult<Void> gh = holderBackend.newAttempt(rh).tryOnce();
        assertTrue(isGranted(gh));

        AcquireAttempt<Void> waiter = waiterBackend.newAttempt(request("wake", LONG_LEASE));
        assertFalse(isGranted(waiter.tryOnce()));
        long t0 = System.nanoTime();
        assertTrue(awaitTurn(waiter, Duration.ofSeconds(10)), "the first turn subscribes and completes on the server's confirmation");
        assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(5).toNanos(), "the first turn only subscribes");
        assertFalse(isGranted(waiter.tryOnce()));
        assertEquals(1L, jedis.pubsubNumSub("dlock:released:wake").get("dlock:released:wake"));

        long[] releasedAt = new long[1];
        Thread releaser = new Thread(() -> {
            TestTiming.sleep(300);
            released(holderBackend.release(grant(rh, gh)));
            releasedAt[0] = System.nanoTime();
        });
        releaser.start();
        // the wait may last 10 s and the lease 10 s: only the release notice can end it early
        assertTrue(awaitTurn(waiter, Duration.ofSeconds(10)), "no notice within 10 s");
        long woke = System.nanoTime();
        releaser.join();
        assertTrue(woke - releasedAt[0] < Duration.ofSeconds(1).toNanos(),
                "woken " + (woke - releasedAt[0]) / 1_000_000 + " ms after the release (generous bound for a loaded CI machine)");
        assertTrue(isGranted(waiter.tryOnce()));
        // the waiter's channel is unsubscribed once it holds the lock: no per-name state is kept
        await("the channel was unsubscribed", Duration.ofSeconds(5),
                () -> jedis.pubsubNumSub("dlock:released:wake").get("dlock:released:wake") == 0L);
    }

    @Test
    void aTurnReturnsAtOnceAndItsStageWaitsForANotice() throws Exception {
        LockBackend<Void> holderBackend = backend();
        LockBackend<Void> waiterBackend = backend();
        assertTrue(isGranted(holderBackend.newAttempt(request("nowake", LONG_LEASE)).tryOnce()));
        AcquireAttempt<Void> waiter = waiterBackend.newAttempt(request("nowake", LONG_LEASE));
        assertFalse(isGranted(waiter.tryOnce()));
        assertTrue(awaitTurn(waiter, Duration.ofSeconds(5)), "subscribed");
        assertFalse(isGranted(waiter.tryOnce()));
        long t0 = System.nanoTime();
        java.util.concurrent.CompletionStage<Void> stage = waiter.turn(Duration.ofSeconds(30));
        long took = (System.nanoTime() - t0) / 1_000_000;
        // turn never waits: the stage is the wait (generous bound for a loaded machine)
        assertTrue(took < 1000, "turn() took " + took + " ms");
        TestTiming.sleep(300);
        assertFalse(stage.toCompletableFuture().isDone(), "no release, no notice: the stage is still pending");
        waiter.abandon();
        await("the channel was unsubscribed", Duration.ofSeconds(5),
                () -> jedis.pubsubNumSub("dlock:released:nowake").get("dlock:released:nowake") == 0L);
    }

    @Test
    void closingTheBackendCompletesAPendingTurn() throws Exception {
        LockBackend<Void> holderBackend = backend();
        LockBackend<Void> waiterBackend = openBackend(server.uri(), Duration.ofSeconds(2));
        assertTrue(isGranted(holderBackend.newAttempt(request("closing", LONG_LEASE)).tryOnce()));
        AcquireAttempt<Void> waiter = waiterBackend.newAttempt(request("closing", LONG_LEASE));
        assertFalse(isGranted(waiter.tryOnce()));
        assertTrue(awaitTurn(waiter, Duration.ofSeconds(5)), "subscribed");
        assertFalse(isGranted(waiter.tryOnce()));
        java.util.concurrent.CompletableFuture<Void> stage = waiter.turn(Duration.ofSeconds(30)).toCompletableFuture();
        waiterBackend.close();
        // generous for a loaded machine; nothing else would end this wait for 30 s
        stage.get(5, java.util.concurrent.TimeUnit.SECONDS);
        waiter.abandon();
    }

    @Test
    void holderTellsOwnerTokenAndRemainingLease() {
        LockBackend<Void> a = backend();
        assertEquals(Optional.empty(), a.holder("who"));
        AcquireRequest r = request("who", Duration.ofSeconds(5));
        AttemptResult<Void> g = a.newAttempt(r).tryOnce();
        LockHolder h = backend().holder("who").orElseThrow();
        assertEquals("who", h.lockName());
        assertEquals(r.ownerId(), h.ownerId());
        assertEquals(token(g), h.fencingToken());
        Duration remaining = h.remaining().orElseThrow();
        assertTrue(remaining.compareTo(Duration.ZERO) > 0 && remaining.compareTo(Duration.ofSeconds(5)) <= 0,
                remaining.toString());
        released(a.release(grant(r, g)));
        assertEquals(Optional.empty(), a.holder("who"));
    }

    @Test
    void dataDlockDidNotWriteIsAConfigurationFailure() {
        LockBackend<Void> a = backend();
        jedis.set("dlock:lock:foreign", "written by another application");
        LockBackendException e = assertThrows(LockBackendException.class, () -> a.holder("foreign"));
        assertTrue(e instanceof LockConfigurationException, "not a configuration failure: " + e);
        assertEquals(Kind.INCOMPATIBLE_SERVER, ((LockConfigurationException) e).kind());
        assertTrue(e.getMessage().contains("did not write"), e.getMessage());
        jedis.del("dlock:fence");
        jedis.hset("dlock:fence", "not", "a counter");
        e = assertThrows(LockBackendException.class, () -> a.newAttempt(request("free", LONG_LEASE)).tryOnce());
        assertTrue(e instanceof LockConfigurationException, "not a configuration failure: " + e);
    }

    @Test
    void namesMapToDistinctKeys() {
        LockBackend<Void> a = backend();
        List<String> names = Arrays.asList("x", "X", "x/y", "x:y", "lock:x", "fence", "epoch", "..", "x ", "ünï©ødé", "😀",
                "x".repeat(512), "x".repeat(511));
        long last = 0;
        for (String name : names) {
            AttemptResult<Void> g = a.newAttempt(request(name, LONG_LEASE)).tryOnce();
            assertTrue(isGranted(g), "free: " + name);
            assertTrue(token(g) > last);
            last = token(g);
        }
        assertEquals(names.size() + 2, jedis.dbSize(), "the names, the counter and the lock-delay marker");
        assertTrue(jedis.exists("dlock:fence"), "the counter is not clobbered by a lock named fence");
        assertTrue(jedis.exists("dlock:epoch"), "nor the lock-delay marker by a lock named epoch");
    }

    @Test
    void keyPrefixFromTheUri() {
        server.markLockDelayPassed(0, "app1:");
        LockBackend<Void> a = openBackend(server.uri() + "?prefix=app1:", TIMEOUT);
        backends.add(a);
        AttemptResult<Void> g = a.newAttempt(request("p", LONG_LEASE)).tryOnce();
        assertTrue(isGranted(g));
        assertTrue(jedis.exists("app1:lock:p"));
        assertTrue(jedis.exists("app1:fence"));
        // another prefix is another namespace
        assertTrue(isGranted(backend().newAttempt(request("p", LONG_LEASE)).tryOnce()));
    }

    @Test
    void databaseFromTheUri() {
        server.markLockDelayPassed(3, RedisServer.DEFAULT_PREFIX);
        LockBackend<Void> a = openBackend(server.uri() + "/3", TIMEOUT);
        backends.add(a);
        assertTrue(isGranted(a.newAttempt(request("db", LONG_LEASE)).tryOnce()));
        assertFalse(jedis.exists("dlock:lock:db"));
        jedis.select(3);
        try {
            assertTrue(jedis.exists("dlock:lock:db"));
        } finally {
            jedis.select(0);
        }
    }

    @Test
    void retryAfterALostAnswerGetsTheSameGrantNotASecondOne() {
        // The acquire script is safe to repeat for one owner id (the connection layer retries once
        // after a fast connection failure): a repeat returns the same token and extends the lease.
        LockBackend<Void> a = backend();
        AcquireRequest r = request("repeat", Duration.ofSeconds(5));
        AttemptResult<Void> first = a.newAttempt(r).tryOnce();
        jedis.pexpire("dlock:lock:repeat", 1000);
        AttemptResult<Void> again = a.newAttempt(r).tryOnce();
        assertTrue(isGranted(again));
        assertEquals(token(first), token(again));
        assertTrue(jedis.pttl("dlock:lock:repeat") > 3000);
    }
}
