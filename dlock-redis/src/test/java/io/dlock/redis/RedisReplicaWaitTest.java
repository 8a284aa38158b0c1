package io.dlock.redis;

import static io.dlock.tck.SpiAnswers.*;

import io.dlock.tck.TestTiming;

import static io.dlock.tck.TestTiming.assertThrowsWithin;
import static io.dlock.tck.TestTiming.await;
import static io.dlock.redis.TestSupport.openBackend;
import static io.dlock.redis.TestSupport.request;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockBackendException;
import io.dlock.spi.Grant;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.LockBackend;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * The {@code waitReplicas} uri parameter against a real primary and replica, and a uri that names
 * the replica, which refuses writes.
 */
class RedisReplicaWaitTest {

    private static final Duration OP_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration FAIL_BOUND = OP_TIMEOUT.plusMillis(1500);

    private static RedisServer primary;
    private static RedisServer replica;

    @BeforeAll
    static void start() {
        primary = RedisServer.start(List.of("--repl-diskless-sync-delay", "0"));
        replica = RedisServer.start(List.of("--replicaof", RedisServer.HOST, Integer.toString(primary.port())));
        try (Jedis jedis = TestSupport.jedis(primary)) {
            await("the replica is in sync", Duration.ofSeconds(20),
                    () -> jedis.info("replication").contains("state=online"));
            // and acknowledges writes: the first acknowledgement can lag behind "online"
            jedis.set("warm-up", "1");
            await("the replica acknowledges writes", Duration.ofSeconds(20), () -> jedis.waitReplicas(1, 200) >= 1);
            jedis.del("warm-up");
        }
    }

    @AfterAll
    static void stop() {
        if (replica != null) {
            replica.close();
        }
        if (primary != null) {
            primary.close();
        }
    }

    @Test
    void grantsAndRenewalsWaitForTheReplica() {
        LockBackend<Void> b = openBackend(primary.uri() + "?waitReplicas=1", OP_TIMEOUT);
        try (Jedis onReplica = TestSupport.jedis(replica)) {
            AcquireRequest r = request("replicated", Duration.ofSeconds(30));
            AttemptResult<Void> g = b.newAttempt(r).tryOnce();
            assertTrue(isGranted(g));
            // WAIT returned only once the replica had the write, so it is there now
            assertTrue(onReplica.get("dlock:lock:replicated").startsWith(r.ownerId() + ":"));
            Grant<Void> held = new Grant<>(r.name(), r.ownerId(), token(g), r.leaseTime(), granted(g).state());
            assertArrayEquals(new boolean[] {true}, renewed(b.renew(List.of(held))));
            assertTrue(released(b.release(held)));
        } finally {
            b.close();
        }
    }

    @Test
    void tooFewReplicasFailTheGrantAndLeaveNothingHeld() {
        LockBackend<Void> b = openBackend(primary.uri() + "?waitReplicas=2", OP_TIMEOUT);
        try (Jedis jedis = TestSupport.jedis(primary)) {
            AcquireAttempt<Void> attempt = b.newAttempt(request("underreplicated", Duration.ofSeconds(30)));
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND, attempt::tryOnce);
            assertTrue(e.getMessage().contains("waitReplicas"), e.getMessage());
            assertTrue(e.retryable(), "replicas may catch up: " + e);
            attempt.abandon(); // what the core does after an unknown outcome
            assertNull(jedis.get("dlock:lock:underreplicated"), "the unconfirmed grant was undone");
        } finally {
            b.close();
        }
    }

    @Test
    void aUriThatNamesTheReplicaIsAConfigurationFailure() {
        try (LockClient c = LockClient.open(LockClientConfig.builder(replica.uri()).operationTimeout(OP_TIMEOUT).build())) {
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                    () -> c.lock("on-the-replica").tryAcquire(Duration.ofSeconds(5)));
            assertTrue(e instanceof LockConfigurationException, "not a configuration failure: " + e);
            assertEquals(Kind.INCOMPATIBLE_SERVER, ((LockConfigurationException) e).kind(), e.getMessage());
            assertFalse(e.retryable());
            assertTrue(e.getMessage().contains("read-only replica"), e.getMessage());
        }
    }

    @Test
    void aStalledReplicaFailsRenewalInTime() {
        LockBackend<Void> b = openBackend(primary.uri() + "?waitReplicas=1", OP_TIMEOUT);
        try {
            AcquireRequest r = request("stalled-replica", Duration.ofSeconds(30));
            AttemptResult<Void> g = b.newAttempt(r).tryOnce();
            assertTrue(isGranted(g));
            Grant<Void> held = new Grant<>(r.name(), r.ownerId(), token(g), r.leaseTime(), granted(g).state());
            replica.pause();
            try {
                assertThrowsWithin(LockBackendException.class, FAIL_BOUND, () -> renewed(b.renew(List.of(held))));
            } finally {
                replica.resume();
            }
            assertFalse(b.holder("stalled-replica").isEmpty(), "a renewal that was not replicated still counts on the primary");
        } finally {
            b.close();
        }
    }
}
