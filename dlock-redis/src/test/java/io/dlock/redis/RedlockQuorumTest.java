package io.dlock.redis;

import static io.dlock.redis.TestSupport.openBackend;
import static io.dlock.redis.TestSupport.request;
import static io.dlock.tck.SpiAnswers.grant;
import static io.dlock.tck.SpiAnswers.isGranted;
import static io.dlock.tck.SpiAnswers.token;
import static io.dlock.tck.TestTiming.assertThrowsWithin;
import static io.dlock.tck.TestTiming.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Capability;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockHolder;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.RenewOutcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * Redlock's quorum rules against three real redis-servers, through the SPI: one node down still
 * grants, two down fail within the timeout, split votes, a node in its lock-delay, tokens that
 * keep increasing across node kills and restarts, release everywhere, the holder a majority
 * agrees on, and URIs that cannot be a Redlock.
 *
 * <p>The servers start once for the class; each test brings every node back up and clears the
 * lock keys it used. Timing bounds are generous (a loaded 2-core machine), never measured figures.
 */
class RedlockQuorumTest {

    private static final Duration OP_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration LEASE = Duration.ofSeconds(5);
    /** The lock-delay of the nodes: short, so the restart tests stay short; at least the lease. */
    private static final Duration LOCK_DELAY = Duration.ofSeconds(5);
    /** Generous, for a loaded machine. */
    private static final Duration PATIENCE = Duration.ofSeconds(20);

    private static final List<RedisServer> NODES = new ArrayList<>();
    private final List<AutoCloseable> closing = new ArrayList<>();

    @BeforeAll
    static void startNodes() {
        for (int i = 0; i < 3; i++) {
            NODES.add(RedisServer.start());
        }
    }

    @AfterAll
    static void stopNodes() {
        NODES.forEach(RedisServer::close);
    }

    @AfterEach
    void closeAndRevive() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        for (RedisServer s : NODES) {
            if (!alive(s)) {
                s.restart();
            }
            s.markLockDelayPassed(0, RedisServer.DEFAULT_PREFIX);
            try (Jedis j = TestSupport.jedis(s)) {
                for (String k : j.keys("dlock:lock:*")) {
                    j.del(k);
                }
                j.del("dlock:fence"); // a test's made-up counter must not reach the next test
            }
        }
    }

    private static boolean alive(RedisServer s) {
        try (Jedis j = TestSupport.jedis(s)) {
            return "PONG".equals(j.ping());
        } catch (RuntimeException e) {
            return false;
        }
    }

    static String uri(List<RedisServer> nodes, String params) {
        return "redlock://" + nodes.stream().map(s -> RedisServer.HOST + ":" + s.port()).collect(Collectors.joining(","))
                + "?lockDelay=" + LOCK_DELAY + params;
    }

    private LockBackend<Void> backend() {
        LockBackend<Void> b = openBackend(uri(NODES, ""), OP_TIMEOUT);
        closing.add(b);
        return b;
    }

    private static String value(RedisServer s, String name) {
        try (Jedis j = TestSupport.jedis(s)) {
            return j.get("dlock:lock:" + name);
        }
    }

    private static AttemptResult<Void> tryOnce(LockBackend<Void> b, AcquireRequest r) {
        AcquireAttempt<Void> a = b.newAttempt(r);
        AttemptResult<Void> result = a.tryOnce();
        if (!isGranted(result)) {
            a.abandon();
        }
        return result;
    }

    @Test
    void grantsOnAllNodesWithTheTokenAndReleasesEverywhere() {
        LockBackend<Void> b = backend();
        assertTrue(b.capabilities().containsAll(List.of(Capability.FENCING, Capability.NOTIFY_WAITERS,
                Capability.HOLDER_QUERY, Capability.SURVIVES_EMPTY_RESTART)));
        AcquireRequest r = request("rl-basic", LEASE);
        AttemptResult<Void> result = tryOnce(b, r);
        Grant<Void> g = grant(r, result);
        // phase 2 reached every node here (all three answered the phase 1 and are up)
        await("the token on every node", PATIENCE, () -> NODES.stream().allMatch(s ->
                (r.ownerId() + ":" + g.fencingToken()).equals(value(s, "rl-basic"))));
        for (RedisServer s : NODES) {
            try (Jedis j = TestSupport.jedis(s)) {
                assertTrue(Long.parseLong(j.get("dlock:fence")) >= g.fencingToken(), "each counter raised to the token");
            }
        }
        Optional<LockHolder> h = b.holder("rl-basic");
        assertEquals(r.ownerId(), h.orElseThrow().ownerId());
        assertEquals(g.fencingToken(), h.get().fencingToken());
        assertEquals(List.of(RenewOutcome.renewed()), b.renew(List.of(g)));
        assertFalse(isGranted(tryOnce(b, request("rl-basic", LEASE))), "a second owner is refused");
        assertEquals(ReleaseOutcome.RELEASED, b.release(g));
        await("the key gone from every node", PATIENCE, () -> NODES.stream().allMatch(s -> value(s, "rl-basic") == null));
        assertEquals(Optional.empty(), b.holder("rl-basic"));
        assertEquals(ReleaseOutcome.NOT_HELD, b.release(g));
        assertEquals(List.of(RenewOutcome.notHeld()), b.renew(List.of(g)));
    }

    @Test
    void oneNodeDownStillGrantsAndTwoDownFailWithinTheTimeout() {
        LockBackend<Void> b = backend();
        NODES.get(2).kill();
        AcquireRequest r = request("rl-down", LEASE);
        Grant<Void> g = grant(r, tryOnce(b, r));
        assertEquals(r.ownerId(), b.holder("rl-down").orElseThrow().ownerId(), "two of three agree");
        assertEquals(List.of(RenewOutcome.renewed()), b.renew(List.of(g)));
        assertEquals(ReleaseOutcome.RELEASED, b.release(g));
        NODES.get(1).kill();
        // fails, retryably, within the operation timeout (generous slack for a loaded machine)
        LockBackendException e = assertThrowsWithin(LockBackendException.class, OP_TIMEOUT.plusSeconds(2),
                () -> tryOnce(b, request("rl-down", LEASE)));
        assertTrue(e.retryable(), e.toString());
        assertTrue(e.getMessage().contains("of 3 answered, 2 are needed"), e.getMessage());
        assertThrowsWithin(LockBackendException.class, OP_TIMEOUT.plusSeconds(2), () -> b.holder("rl-down"));
    }

    @Test
    void aFrozenNodeDoesNotHoldUpTheMajority() throws Exception {
        LockBackend<Void> b = backend();
        tryOnce(b, request("rl-warm", Duration.ofMillis(100))); // connections made before the pause
        NODES.get(0).pause();
        try {
            long start = System.nanoTime();
            AcquireRequest r = request("rl-frozen", LEASE);
            Grant<Void> g = grant(r, tryOnce(b, r));
            assertEquals(ReleaseOutcome.RELEASED, b.release(g));
            long millis = (System.nanoTime() - start) / 1_000_000;
            // the majority answers at once; the frozen node would cost the whole 1 s timeout per phase.
            // A bound, not a speed claim: well below the 3 s that waiting for it would take
            assertTrue(millis < 2 * OP_TIMEOUT.toMillis(), "took " + millis + " ms");
        } finally {
            NODES.get(0).resume();
        }
    }

    @Test
    void aLockHeldOnANodeIsBusyNotAFailureWhileAnotherIsDownAndOneSlow() {
        LockBackend<Void> b = backend();
        tryOnce(b, request("rl-warm", Duration.ofMillis(100))); // connections made before the pause
        try (Jedis j0 = TestSupport.jedis(NODES.get(0))) {
            j0.psetex("dlock:lock:rl-busy", LEASE.toMillis(), "eeee:9");
        }
        NODES.get(2).kill();
        NODES.get(1).pause();
        try {
            // node 0 busy, node 2 refused, node 1 not answering yet: no majority can grant, and the
            // reason is the holder, not the failures (one failure of three leaves a majority)
            assertInstanceOf(AttemptResult.Busy.class, tryOnce(b, request("rl-busy", LEASE)));
        } finally {
            NODES.get(1).resume();
        }
    }

    @Test
    void threadsAreBoundedByNodesAndPoolSizeNotByLocksOrWaiters() {
        // the backend's threads come from TestSupport's factory, named test-redis-N
        long before = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("test-redis-")).count();
        LockBackend<Void> b = openBackend(uri(NODES, "&poolSize=2"), OP_TIMEOUT);
        closing.add(b);
        int locks = 60;
        try (Jedis j0 = TestSupport.jedis(NODES.get(0)); Jedis j1 = TestSupport.jedis(NODES.get(1))) {
            for (int i = 0; i < locks; i++) {
                j0.psetex("dlock:lock:rl-many-" + i, LEASE.toMillis(), "ffff:1");
                j1.psetex("dlock:lock:rl-many-" + i, LEASE.toMillis(), "ffff:1");
            }
        }
        List<AcquireAttempt<Void>> waiting = new ArrayList<>();
        for (int i = 0; i < locks; i++) {
            AcquireAttempt<Void> a = b.newAttempt(request("rl-many-" + i, LEASE));
            assertInstanceOf(AttemptResult.Busy.class, a.tryOnce());
            a.turn(Duration.ofSeconds(10)); // a waiter: subscribed on every node
            waiting.add(a);
        }
        long threads = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("test-redis-")
                && t.isAlive()).count() - before;
        waiting.forEach(AcquireAttempt::abandon);
        // per node at most poolSize call threads and one subscriber thread, plus the cleaner's few
        assertTrue(threads <= 3 * (2 + 1) + 4, threads + " threads for " + locks + " waiting locks");
    }

    @Test
    void aMajorityFrozenFailsWithinTheTimeoutNotBusy() {
        LockBackend<Void> b = backend();
        tryOnce(b, request("rl-warm", Duration.ofMillis(100))); // connections made before the pause
        NODES.get(0).pause();
        NODES.get(1).pause();
        try {
            // no answer from two of three by the deadline: the outcome is unknown, not "someone holds it"
            LockBackendException e = assertThrowsWithin(LockBackendException.class, OP_TIMEOUT.plusSeconds(2),
                    () -> tryOnce(b, request("rl-frozen-majority", LEASE)));
            assertTrue(e.retryable(), e.toString());
        } finally {
            NODES.get(0).resume();
            NODES.get(1).resume();
        }
    }

    @Test
    void aSplitVoteIsBusyWithAShortHintAndUndoesItsPart() {
        LockBackend<Void> b = backend();
        // two other contenders each got one node in their rounds, not yet tokened (rounds in flight)
        try (Jedis j0 = TestSupport.jedis(NODES.get(0)); Jedis j1 = TestSupport.jedis(NODES.get(1))) {
            j0.psetex("dlock:lock:rl-split", LEASE.toMillis(), "aaaa:0.1");
            j1.psetex("dlock:lock:rl-split", LEASE.toMillis(), "bbbb:0.1");
        }
        AttemptResult<Void> result = tryOnce(b, request("rl-split", LEASE));
        AttemptResult.Busy<Void> busy = assertInstanceOf(AttemptResult.Busy.class, result);
        // jitter: at most twice the round's time plus 20 ms, far below the 5 s the keys have left
        assertTrue(busy.retryAfter().orElseThrow().toMillis() < LEASE.toMillis() / 2, busy.toString());
        await("its grant on the third node undone", PATIENCE, () -> value(NODES.get(2), "rl-split") == null);
        assertEquals("aaaa:0.1", value(NODES.get(0), "rl-split"));
        assertEquals("bbbb:0.1", value(NODES.get(1), "rl-split"));
    }

    @Test
    void aMajorityHeldElsewhereIsBusyUntilItsExpiry() {
        LockBackend<Void> b = backend();
        try (Jedis j0 = TestSupport.jedis(NODES.get(0)); Jedis j1 = TestSupport.jedis(NODES.get(1))) {
            j0.psetex("dlock:lock:rl-held", 3000, "cccc:7");
            j1.psetex("dlock:lock:rl-held", 4000, "cccc:7");
        }
        AttemptResult.Busy<?> busy = assertInstanceOf(AttemptResult.Busy.class, tryOnce(b, request("rl-held", LEASE)));
        long hint = busy.retryAfter().orElseThrow().toMillis();
        // node 2 granted (undone at once), so a majority is free once node 0's key expires
        assertTrue(hint > 2000 && hint <= 3000, "the expiry that frees a majority: " + hint);
        assertEquals("cccc", b.holder("rl-held").orElseThrow().ownerId());
        await("the round's grant on node 2 undone", PATIENCE, () -> value(NODES.get(2), "rl-held") == null);
    }

    @Test
    void aLateRoundNeverTakesTheKeyBackFromALaterRound() {
        try (Jedis j = TestSupport.jedis(NODES.get(0))) {
            // this owner's round 5 holds the key; its round 4's phase 1 arrives late
            j.psetex("dlock:lock:rl-late", LEASE.toMillis(), "dddd:0.5");
            Object reply = j.eval(scriptSource("REDLOCK_LOCK"), List.of("dlock:lock:rl-late", "dlock:fence", "dlock:epoch"),
                    List.of("dddd", "5000", "0", "dddd:0.4"));
            assertEquals(0L, ((List<?>) reply).get(0), "a late round answers busy");
            assertEquals("dddd:0.5", j.get("dlock:lock:rl-late"));
        }
    }

    /** A script's source, as the backend sends it with EVAL. */
    private static String scriptSource(String name) {
        try {
            Class<?> c = Class.forName("io.dlock.redis.internal.Script");
            java.lang.reflect.Method source = c.getDeclaredMethod("source");
            source.setAccessible(true);
            for (Object constant : c.getEnumConstants()) {
                if (((Enum<?>) constant).name().equals(name)) {
                    return (String) source.invoke(constant);
                }
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        throw new IllegalArgumentException(name);
    }

    @Test
    void aNodeInItsLockDelayDoesNotStopTheMajority() {
        LockBackend<Void> b = backend();
        NODES.get(1).kill();
        NODES.get(1).restart(); // empty: no marker, so its lock-delay starts at the first grant asked
        AcquireRequest r = request("rl-delay", LEASE);
        Grant<Void> g = grant(r, tryOnce(b, r));
        assertNull(value(NODES.get(1), "rl-delay"), "the restarted node granted nothing");
        try (Jedis j = TestSupport.jedis(NODES.get(1))) {
            assertTrue(j.get("dlock:epoch") != null, "its lock-delay marker is written");
        }
        assertEquals(r.ownerId(), b.holder("rl-delay").orElseThrow().ownerId());
        assertEquals(ReleaseOutcome.RELEASED, b.release(g));
        // two nodes in their lock-delay: no majority can grant; busy, not a failure
        NODES.get(2).kill();
        NODES.get(2).restart();
        AttemptResult.Busy<?> busy = assertInstanceOf(AttemptResult.Busy.class, tryOnce(b, request("rl-delay", LEASE)));
        assertTrue(busy.retryAfter().orElseThrow().toMillis() > 0);
    }

    @Test
    void tokensKeepIncreasingAcrossNodeKillsAndRestarts() {
        LockBackend<Void> b = backend();
        long last = 0;
        for (int round = 0; round < 6; round++) {
            AcquireRequest r = request("rl-order", Duration.ofSeconds(1));
            Grant<Void> g = grant(r, tryOnce(b, r));
            assertTrue(g.fencingToken() > last, "token " + g.fencingToken() + " after " + last);
            last = g.fencingToken();
            assertEquals(ReleaseOutcome.RELEASED, b.release(g));
            RedisServer victim = NODES.get(round % 3);
            victim.kill();
            victim.restart(); // empty, and in its lock-delay: the other two are the majority
            victim.markLockDelayPassed(0, RedisServer.DEFAULT_PREFIX); // lets the next victim's turn find a majority
        }
    }

    @Test
    void tokensIncreaseOverTheCounterOfAnyMajorityMember() {
        LockBackend<Void> b = backend();
        long high = 4_000_000_000_000_000L; // far above TIME in microseconds
        try (Jedis j = TestSupport.jedis(NODES.get(1))) {
            j.set("dlock:fence", Long.toString(high));
        }
        NODES.get(0).kill(); // the majority is now nodes 1 and 2: node 1's counter must count
        AcquireRequest r = request("rl-counter", LEASE);
        Grant<Void> g = grant(r, tryOnce(b, r));
        assertEquals(high + 1, g.fencingToken());
        try (Jedis j = TestSupport.jedis(NODES.get(2))) {
            assertEquals(Long.toString(high + 1), j.get("dlock:fence"), "phase 2 raised the other counter");
        }
        assertEquals(ReleaseOutcome.RELEASED, b.release(g));
    }

    @Test
    void theStandaloneAcquireScriptIsUnchanged() {
        // Script.ACQUIRE is now composed with the shared lock-delay fragment; its text (and so its
        // SHA, which deployed servers cache) must be what it was before
        assertEquals("f18a05c51cce00b455368f191e123fd3e916fd1d", sha1(scriptSource("ACQUIRE")));
    }

    private static String sha1(String s) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-1")
                    .digest(s.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void urisThatCannotBeARedlockAreRefusedNamingThePart() {
        String two = "redlock://127.0.0.1:1,127.0.0.1:2";
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LockClient.open(LockClientConfig.builder(two).build()));
        assertTrue(e.getMessage().contains("host") && e.getMessage().contains("at least 3"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> LockClient.open(LockClientConfig.builder(
                "redlock://127.0.0.1:1,127.0.0.1:2,127.0.0.1:1").build()));
        assertTrue(e.getMessage().contains("host") && e.getMessage().contains("twice"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> LockClient.open(LockClientConfig.builder(
                "redlock://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3?waitReplicas=1").build()));
        assertTrue(e.getMessage().contains("waitReplicas"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> LockClient.open(LockClientConfig.builder(
                "redlocks://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3/x").build()));
        assertTrue(e.getMessage().contains("database"), e.getMessage());
    }
}
