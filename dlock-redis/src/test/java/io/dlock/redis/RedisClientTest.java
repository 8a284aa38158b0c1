package io.dlock.redis;

import io.dlock.tck.TestTiming;

import static io.dlock.tck.TestTiming.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockHolder;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/** The backend under the shared core, through {@link LockClient}, against a real redis-server. */
class RedisClientTest {

    private static final LockOptions TEN_SECONDS = LockOptions.builder().leaseTime(Duration.ofSeconds(10)).build();

    private static RedisServer server;
    private static Jedis jedis;
    private final List<LockClient> clients = new ArrayList<>();

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
    void closeClients() {
        clients.forEach(LockClient::close);
    }

    private LockClient client(Duration retryBase, Duration retryCap) {
        LockClient c = LockClient.open(LockClientConfig.builder(server.uri()).operationTimeout(Duration.ofSeconds(2))
                .retry(retryBase, retryCap).build());
        clients.add(c);
        return c;
    }

    private LockClient client() {
        return client(Duration.ofMillis(20), Duration.ofSeconds(1));
    }

    @Test
    void releaseWakesAWaiterThatWouldOtherwisePollEvery20Seconds() throws Exception {
        LockClient holder = client();
        // polling alone would take up to 20 s (and the lease is 10 s): a prompt hand-off needs the notice
        LockClient waiter = client(Duration.ofSeconds(20), Duration.ofSeconds(20));
        for (int round = 0; round < 3; round++) {
            Lease held = holder.lock("handoff", TEN_SECONDS).tryAcquire().orElseThrow();
            CompletableFuture<Optional<Lease>> waiting = waiter.lock("handoff", TEN_SECONDS)
                    .acquireAsync(Duration.ofSeconds(30));
            // let the waiter subscribe and make its post-subscription try
            await("the waiter subscribed", Duration.ofSeconds(5),
                    () -> jedis.pubsubNumSub("dlock:released:handoff").get("dlock:released:handoff") == 1L);
            TestTiming.sleep(100);
            assertFalse(waiting.isDone());
            long releasedAt = System.nanoTime();
            held.release();
            Lease got = waiting.get(10, TimeUnit.SECONDS).orElseThrow();
            long handOff = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - releasedAt);
            // generous bound for a loaded machine; typical hand-off is a few ms
            assertTrue(handOff < 1000, "round " + round + ": hand-off took " + handOff + " ms");
            assertTrue(got.fencingToken() > held.fencingToken());
            got.release();
        }
    }

    @Test
    void holderTellsWhoHoldsALock() throws Exception {
        LockClient a = client();
        LockClient observer = client();
        assertEquals(Optional.empty(), observer.holder("owned"));
        Lease lease = a.lock("owned", TEN_SECONDS).tryAcquire().orElseThrow();
        LockHolder h = observer.holder("owned").orElseThrow();
        assertEquals(lease.ownerId(), h.ownerId());
        assertEquals(lease.fencingToken(), h.fencingToken());
        assertTrue(h.remaining().orElseThrow().compareTo(Duration.ofSeconds(10)) <= 0);
        lease.release();
        assertEquals(Optional.empty(), observer.holder("owned"));
    }

    @Test
    void tokensIncreaseAcrossClientsAndClientRestarts() throws Exception {
        long last = 0;
        for (int i = 0; i < 10; i++) {
            try (LockClient c = LockClient.open(server.uri())) {
                Lease lease = c.lock("restarts").tryAcquire(Duration.ofSeconds(2)).orElseThrow();
                assertTrue(lease.fencingToken() > last, lease.fencingToken() + " after " + last);
                last = lease.fencingToken();
                lease.release();
            }
        }
    }

    @Test
    void aThousandReleasedLocksAndTheirWaitersLeaveNothingBehind() throws Exception {
        LockClient a = client();
        LockClient b = client(Duration.ofMillis(5), Duration.ofMillis(50));
        for (int i = 0; i < 1000; i++) {
            a.lock("many-" + i, TEN_SECONDS).tryAcquire().orElseThrow().release();
        }
        // some contention, so that waiters subscribe to release channels
        for (int i = 0; i < 20; i++) {
            Lease held = a.lock("contended-" + i, TEN_SECONDS).tryAcquire().orElseThrow();
            CompletableFuture<Optional<Lease>> waiting = b.lock("contended-" + i, TEN_SECONDS)
                    .acquireAsync(Duration.ofSeconds(10));
            TestTiming.sleep(20);
            held.release();
            waiting.get(10, TimeUnit.SECONDS).orElseThrow().release();
        }
        assertEquals(2, jedis.dbSize(), "only the shared token counter and the lock-delay marker remain: "
                + jedis.keys("*"));
        await("every release channel was unsubscribed", Duration.ofSeconds(5),
                () -> jedis.pubsubChannels("dlock:released:*").isEmpty());
    }

    @Test
    void closeStopsThePubSubThread() throws Exception {
        LockClient holder = client();
        Lease held = holder.lock("threads", TEN_SECONDS).tryAcquire().orElseThrow();
        Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
        LockClient c = LockClient.open(server.uri());
        assertTrue(c.lock("threads", TEN_SECONDS).tryAcquire(Duration.ofMillis(300)).isEmpty());
        List<Thread> pubSub = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (!before.contains(t) && t.getName().contains("-redis-")) {
                pubSub.add(t);
            }
        }
        assertEquals(1, pubSub.size(), "one pub/sub thread per client: " + pubSub);
        c.close();
        assertFalse(pubSub.get(0).isAlive(), "the pub/sub thread ended before close() returned");
        held.release();
    }
}
