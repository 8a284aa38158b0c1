package io.dlock.redis;

import static io.dlock.tck.SpiAnswers.*;

import static io.dlock.redis.TestSupport.openBackend;
import static io.dlock.redis.TestSupport.request;
import static io.dlock.tck.TestTiming.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import io.dlock.LostReason;
import io.dlock.spi.Grant;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.LockBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * The lock-delay against real redis-server processes: after the server lost its locks (a restart
 * without persistence, a restart from an old snapshot, a failover to a replica that missed the
 * grant), nobody is granted a lock until a lease granted before can no longer be valid; then the
 * lock is granted with a higher token.
 *
 * <p>Timing: the lock-delay is 3 s and the leases 3 s. Lower bounds on when a grant came are the
 * property under test (never before the lock-delay has passed since the server came back); the
 * only tolerance is 20 ms for the difference between the server's wall clock, which measures the
 * lock-delay, and the test's monotonic clock. Upper bounds are generous (20 s) for a loaded machine.
 */
class RedisLockDelayTest {

    private static final Duration OP_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration LOCK_DELAY = Duration.ofSeconds(3);
    private static final Duration LEASE = Duration.ofSeconds(3);
    /** Between clocks: the server's TIME (wall clock) and System.nanoTime (monotonic) may drift apart a little. */
    private static final long CLOCK_TOLERANCE_MILLIS = 20;
    /** Generous, for a loaded 2-core machine; never a measured figure. */
    private static final Duration PATIENCE = Duration.ofSeconds(20);

    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closeLater(T c) {
        closing.add(c);
        return c;
    }

    private LockClient client(String uri) {
        return closeLater(LockClient.open(LockClientConfig.builder(uri).operationTimeout(OP_TIMEOUT)
                .defaultLockOptions(LockOptions.builder().leaseTime(LEASE).build()).build()));
    }

    private static String withLockDelay(RedisServer server) {
        return server.uri() + "?lockDelay=" + LOCK_DELAY;
    }

    /** A held lease and when it was lost, if it was. */
    private record Held(Lease lease, AtomicLong lostAt, AtomicReference<LostReason> reason) {
        static Held of(Lease lease) {
            Held h = new Held(lease, new AtomicLong(), new AtomicReference<>());
            lease.onLost(e -> {
                h.reason.compareAndSet(null, e.reason());
                h.lostAt.compareAndSet(0, System.nanoTime());
            });
            return h;
        }
    }

    /**
     * Takes the lock with a second client as soon as the server lets it (polling with tryAcquire,
     * through backend failures while the server comes back), and checks the lock-delay's promise.
     */
    private static Lease secondHolderAfterTheLockDelay(LockClient other, String name, Held old, long upAt)
            throws InterruptedException {
        // the server just came back: nobody gets the lock at once
        assertEquals(Optional.empty(), other.lock(name).tryAcquire(), "granted at once after the server lost the lock");
        Optional<Lease> next = other.lock(name).tryAcquire(PATIENCE);
        long grantedAt = System.nanoTime();
        boolean oldValid = old.lease().isValid();
        assertTrue(next.isPresent(), "no grant within " + PATIENCE + " after the server came back");
        long after = TimeUnit.NANOSECONDS.toMillis(grantedAt - upAt);
        assertTrue(after >= LOCK_DELAY.toMillis() - CLOCK_TOLERANCE_MILLIS, "granted " + after
                + " ms after the server came back, before the lock-delay of " + LOCK_DELAY + " had passed");
        assertFalse(oldValid, "granted while the lease from before was still valid on its holder's clock");
        assertTrue(old.lostAt().get() != 0 && old.lostAt().get() - grantedAt <= 0,
                "the old holder was not told before the lock was granted again");
        assertTrue(next.get().fencingToken() > old.lease().fencingToken(),
                next.get().fencingToken() + " after " + old.lease().fencingToken());
        return next.get();
    }

    @Test
    void anEmptyRestartLetsNobodyInUntilTheLockDelayHasPassed() throws Exception {
        RedisServer server = closeLater(RedisServer.start());
        LockClient holder = client(withLockDelay(server));
        LockClient other = client(withLockDelay(server));
        Held old = Held.of(holder.lock("restart").tryAcquire().orElseThrow());

        server.kill();
        server.restart();
        long upAt = System.nanoTime();
        try (Jedis j = TestSupport.jedis(server)) {
            assertEquals(0, j.dbSize(), "no persistence: the restart lost every key");
        }
        Lease next = secondHolderAfterTheLockDelay(other, "restart", old, upAt);
        // the holder renews every second: its next renewal after the restart was answered "not owner"
        assertEquals(LostReason.SUPERSEDED, old.reason().get());
        // the lock-delay is per server, not per name: other names are free again too, and the holder's client works
        Lease again = holder.lock("restart-2").tryAcquire().orElseThrow();
        assertTrue(again.fencingToken() > old.lease().fencingToken());
        again.release();
        next.release();
    }

    @Test
    void aRestartFromAnOldSnapshotStartsALockDelay() throws Exception {
        RedisServer server = closeLater(RedisServer.start());
        LockClient holder = client(withLockDelay(server));
        LockClient other = client(withLockDelay(server));
        holder.lock("before-snapshot").tryAcquire().orElseThrow().release(); // the marker is written and passed
        try (Jedis j = TestSupport.jedis(server)) {
            assertEquals("OK", j.save()); // the snapshot has the marker, but not the lock taken next
        }
        Held old = Held.of(holder.lock("snapshot").tryAcquire().orElseThrow());

        server.kill();
        server.restart(); // loads the snapshot: the marker is back, written by another server process
        long upAt = System.nanoTime();
        try (Jedis j = TestSupport.jedis(server)) {
            assertTrue(j.exists("dlock:epoch"), "the snapshot was loaded");
            assertFalse(j.exists("dlock:lock:snapshot"), "the snapshot predates the grant");
        }
        secondHolderAfterTheLockDelay(other, "snapshot", old, upAt).release();
    }

    @Test
    void aFailoverToAReplicaThatMissedTheGrantStartsALockDelay() throws Exception {
        RedisServer primary = closeLater(RedisServer.start(List.of("--repl-diskless-sync-delay", "0")));
        RedisServer replica = closeLater(RedisServer.start(List.of("--replicaof", RedisServer.HOST,
                Integer.toString(primary.port()))));
        LockClient holder = client(withLockDelay(primary));
        holder.lock("warm-up").tryAcquire().orElseThrow().release();
        try (Jedis p = TestSupport.jedis(primary); Jedis r = TestSupport.jedis(replica)) {
            await("the replica has the primary's marker", PATIENCE,
                    () -> p.get("dlock:epoch") != null && p.get("dlock:epoch").equals(r.get("dlock:epoch")));
            // the replica is cut off before the grant, as a partition would: it never gets it
            r.replicaofNoOne();
        }
        Held old = Held.of(holder.lock("failover").tryAcquire().orElseThrow());
        primary.kill(); // and the replica takes over, as a failover would promote it
        long upAt = System.nanoTime();
        LockClient other = client(withLockDelay(replica));
        try (Jedis r = TestSupport.jedis(replica)) {
            assertFalse(r.exists("dlock:lock:failover"), "the promoted replica missed the grant");
        }
        secondHolderAfterTheLockDelay(other, "failover", old, upAt).release();
    }

    @Test
    void aWaiterIsGrantedWhenTheLockDelayEndsAndWithoutItAtOnce() throws Exception {
        RedisServer server = closeLater(RedisServer.startUnmarked(List.of()));
        // a server as just installed: the first acquire writes the marker and starts a lock-delay
        LockBackend<Void> delayed = closeLater(openBackend(withLockDelay(server), OP_TIMEOUT));
        long t0 = System.nanoTime();
        AttemptResult<Void> first = delayed.newAttempt(request("first", LEASE)).tryOnce();
        assertFalse(isGranted(first));
        Duration hint = ((AttemptResult.Busy<Void>) first).retryAfter().orElseThrow();
        assertTrue(hint.compareTo(LOCK_DELAY) <= 0 && hint.compareTo(LOCK_DELAY.minusSeconds(1)) > 0, hint.toString());
        // lockDelay=0 turns it off for that client: granted at once, and no lock-delay capability
        LockBackend<Void> off = closeLater(openBackend(server.uri() + "?lockDelay=0", OP_TIMEOUT));
        assertTrue(isGranted(off.newAttempt(request("off", LEASE)).tryOnce()));
        assertFalse(off.capabilities().contains(io.dlock.Capability.SURVIVES_EMPTY_RESTART));
        assertTrue(delayed.capabilities().contains(io.dlock.Capability.SURVIVES_EMPTY_RESTART));

        LockClient c = client(withLockDelay(server));
        Lease lease = c.lock("first").tryAcquire(PATIENCE).orElseThrow();
        long after = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(after >= LOCK_DELAY.toMillis() - CLOCK_TOLERANCE_MILLIS, after + " ms");
        lease.release();
    }

    @Test
    void theLongestLockDelayAskedForHoldsEveryClientOff() throws Exception {
        RedisServer server = closeLater(RedisServer.startUnmarked(List.of()));
        LockBackend<Void> shortDelay = closeLater(openBackend(server.uri() + "?lockDelay=PT1S", OP_TIMEOUT));
        LockBackend<Void> longDelay = closeLater(openBackend(withLockDelay(server), OP_TIMEOUT));
        long t0 = System.nanoTime();
        assertFalse(isGranted(shortDelay.newAttempt(request("a", Duration.ofSeconds(1))).tryOnce())); // starts it: 1 s
        assertFalse(isGranted(longDelay.newAttempt(request("a", LEASE)).tryOnce())); // raises it to 3 s
        // the 1 s client is held off for the 3 s too: the other client's leases may be that long
        long grantedAfter = 0;
        while (grantedAfter == 0 && System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(20)) {
            AttemptResult<Void> r = shortDelay.newAttempt(request("a", Duration.ofSeconds(1))).tryOnce();
            if (isGranted(r)) {
                grantedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            } else {
                Thread.sleep(50);
            }
        }
        assertTrue(grantedAfter >= LOCK_DELAY.toMillis() - CLOCK_TOLERANCE_MILLIS, grantedAfter + " ms");
    }

    @Test
    void aMarkerFromTheFutureRestartsTheLockDelayFromNow() throws Exception {
        RedisServer server = closeLater(RedisServer.start());
        LockBackend<Void> b = closeLater(openBackend(withLockDelay(server), OP_TIMEOUT));
        try (Jedis j = TestSupport.jedis(server)) {
            // as if the server's clock went back an hour since the marker was written
            String[] marker = j.get("dlock:epoch").split(" ");
            long hourAhead = Long.parseLong(j.time().get(0)) * 1_000_000L + 3_600_000_000L;
            j.set("dlock:epoch", marker[0] + " " + hourAhead + " 0");
        }
        AttemptResult<Void> r = b.newAttempt(request("clock", LEASE)).tryOnce();
        assertFalse(isGranted(r), "a clock that went back proves nothing about the time since the marker");
        Duration hint = ((AttemptResult.Busy<Void>) r).retryAfter().orElseThrow();
        assertTrue(hint.compareTo(LOCK_DELAY) <= 0, "refused for " + hint + ", not one lock-delay from now");
    }

    @Test
    void aUserWhoMayNotRunInfoStillGetsLocksAndTheLockDelayAfterAnEmptyRestart() throws Exception {
        RedisServer server = closeLater(RedisServer.start(List.of("--user", "bob", "on", ">bob-pw", "~*", "&*", "+@all",
                "-info")));
        String uri = "redis://bob:bob-pw@" + RedisServer.HOST + ":" + server.port() + "?lockDelay=" + LOCK_DELAY;
        LockClient holder = client(uri);
        LockClient other = client(uri);
        Held old = Held.of(holder.lock("no-info").tryAcquire().orElseThrow()); // the marker from start() is accepted
        server.kill();
        server.restart();
        long upAt = System.nanoTime();
        secondHolderAfterTheLockDelay(other, "no-info", old, upAt).release();
    }

    @Test
    void noLeaseLongerThanTheLockDelay() {
        RedisServer server = closeLater(RedisServer.start());
        LockClient c = client(withLockDelay(server));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> c.lock("long", LockOptions.builder().leaseTime(LOCK_DELAY.plusMillis(1)).build()));
        assertTrue(e.getMessage().contains("leaseTime"), e.getMessage());
        LockBackend<Void> b = closeLater(openBackend(withLockDelay(server), OP_TIMEOUT));
        assertEquals(LOCK_DELAY, b.maximumLeaseTime());
        e = assertThrows(IllegalArgumentException.class, () -> b.newAttempt(request("long", LOCK_DELAY.plusMillis(1))));
        assertTrue(e.getMessage().contains("leaseTime") && e.getMessage().contains("lockDelay"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> renewed(b.renew(List.of(new Grant<>("long",
                TestSupport.ownerId(), 1, LOCK_DELAY.plusMillis(1), null)))));
        assertTrue(e.getMessage().contains("leaseTime"), e.getMessage());
    }
}
