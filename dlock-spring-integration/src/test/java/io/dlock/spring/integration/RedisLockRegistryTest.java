package io.dlock.spring.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockLostException;
import io.dlock.redis.RedisServer;
import io.dlock.tck.TestTiming;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The registry against a real {@code redis-server} on a free loopback port: two registries over
 * two clients ("two replicas") exclude each other and hand the lock over with growing fencing
 * tokens, and a lease lost because the server went away is reported by unlock.
 */
class RedisLockRegistryTest {

    /** Generous: the machine is shared, so waits that should end at once are given seconds. */
    private static final Duration SLACK = Duration.ofSeconds(10);

    private RedisServer redis;
    private LockClient clientA;
    private LockClient clientB;
    private DlockLockRegistry a;
    private DlockLockRegistry b;

    @BeforeEach
    void start() {
        redis = RedisServer.start();
        clientA = LockClient.open(config());
        clientB = LockClient.open(config());
        a = DlockLockRegistry.builder(clientA).prefix("si:").leaseTime(Duration.ofMillis(1500)).build();
        b = DlockLockRegistry.builder(clientB).prefix("si:").leaseTime(Duration.ofMillis(1500)).build();
    }

    private LockClientConfig config() {
        return LockClientConfig.builder(redis.uri())
                .operationTimeout(Duration.ofMillis(300))
                .retry(Duration.ofMillis(5), Duration.ofMillis(50))
                .build();
    }

    @AfterEach
    void stop() {
        try {
            clientA.close();
            clientB.close();
        } finally {
            redis.close();
        }
    }

    @Test
    void twoReplicasExcludeEachOtherAndHandOverWithGrowingTokens() throws Exception {
        Lock la = a.obtain("job");
        Lock lb = b.obtain("job");
        la.lock();
        long first = a.currentLease("job").orElseThrow().fencingToken();
        assertFalse(lb.tryLock());
        long start = System.nanoTime();
        assertFalse(lb.tryLock(300, TimeUnit.MILLISECONDS));
        assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) >= 300, "tryLock waited its time");
        CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
            lb.lock();
            try {
                return b.currentLease("job").orElseThrow().fencingToken();
            } finally {
                lb.unlock();
            }
        });
        // held past its lease time: renewed in the background
        TestTiming.sleep(2000);
        assertFalse(waiter.isDone());
        a.renewLock("job");
        la.unlock();
        long second = waiter.get(SLACK.toMillis(), TimeUnit.MILLISECONDS);
        assertTrue(second > first, "fencing tokens grow: " + first + " then " + second);
        assertTrue(la.tryLock());
        la.unlock();
    }

    @Test
    void aLeaseLostBecauseTheServerWentAwayIsReportedByUnlock() throws Exception {
        Lock la = a.obtain("lost");
        la.lock();
        Lease lease = a.currentLease("lost").orElseThrow();
        redis.close();
        TestTiming.await("the lease is no longer valid", SLACK, () -> !lease.isValid());
        ConcurrentModificationException e = assertThrows(ConcurrentModificationException.class, la::unlock);
        assertInstanceOf(LockLostException.class, e.getCause());
        assertThrows(IllegalMonitorStateException.class, la::unlock, "the local lock was released");
        assertEquals(0, a.currentLease("lost").stream().count());
    }
}
