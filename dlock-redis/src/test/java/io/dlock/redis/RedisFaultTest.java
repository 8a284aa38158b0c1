package io.dlock.redis;

import static io.dlock.tck.SpiAnswers.*;

import io.dlock.tck.TestTiming;

import static io.dlock.tck.TestTiming.assertThrowsWithin;
import static io.dlock.tck.TestTiming.await;
import static io.dlock.redis.TestSupport.openBackend;
import static io.dlock.redis.TestSupport.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import io.dlock.spi.Grant;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.LockBackend;
import io.dlock.tck.NetworkFault;
import io.dlock.tck.TcpProxy;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * Server faults against a real redis-server, one per test: kill and restart without persistence,
 * SIGSTOP, a closed port. The operation timeout is 1 s; a failure must come within 2.5 s (the
 * timeout plus 1.5 s of slack for a loaded machine), never a hang.
 */
class RedisFaultTest {

    private static final Duration OP_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration FAIL_BOUND = OP_TIMEOUT.plusMillis(1500);
    /** For the tests that restart the server: it then refuses grants for one lock-delay. */
    private static final Duration SHORT_LOCK_DELAY = Duration.ofSeconds(3);
    private static final String SHORT_LOCK_DELAY_URI = "?lockDelay=" + SHORT_LOCK_DELAY;
    /** Generous for a loaded machine: one lock-delay and a reconnect, plus slack. */
    private static final Duration AFTER_LOCK_DELAY = SHORT_LOCK_DELAY.plusSeconds(15);

    private RedisServer server;

    @BeforeEach
    void start() {
        server = RedisServer.start();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private LockClient client() {
        return LockClient.open(LockClientConfig.builder(server.uri()).operationTimeout(OP_TIMEOUT).build());
    }

    private LockClient client(String query, LockOptions options) {
        return LockClient.open(LockClientConfig.builder(server.uri() + query).operationTimeout(OP_TIMEOUT)
                .defaultLockOptions(options).build());
    }

    @Test
    void tokensIncreaseAcrossARestartThatLostAllData() throws Exception {
        long before;
        // a short lock-delay (and leases as long), which the restart starts: the grants after it wait that out
        LockOptions shortLease = LockOptions.builder().leaseTime(SHORT_LOCK_DELAY).build();
        try (LockClient c = client(SHORT_LOCK_DELAY_URI, shortLease); Jedis jedis = TestSupport.jedis(server)) {
            Lease first = c.lock("restart").tryAcquire(Duration.ofSeconds(2)).orElseThrow();
            before = first.fencingToken();
            first.release();

            server.kill();
            server.restart();
            jedis.close();
            try (Jedis fresh = TestSupport.jedis(server)) {
                assertEquals(0, fresh.dbSize(), "no persistence: the restart lost the counter");
            }
            // the same client: its pooled connections died with the server; the first call retries
            // once on a fresh connection, and the counter restarts from the server's clock
            Lease second = c.lock("restart").tryAcquire(AFTER_LOCK_DELAY).orElseThrow();
            assertTrue(second.fencingToken() > before, second.fencingToken() + " after " + before);
            second.release();
        }
        try (LockClient other = client(SHORT_LOCK_DELAY_URI, shortLease)) {
            Lease third = other.lock("restart").tryAcquire(AFTER_LOCK_DELAY).orElseThrow();
            assertTrue(third.fencingToken() > before);
        }
    }

    @Test
    void unreachableServerFailsWithinTheOperationTimeout() {
        String uri = "redis://" + RedisServer.HOST + ":" + RedisServer.freePort();
        try (LockClient c = LockClient.open(LockClientConfig.builder(uri).operationTimeout(OP_TIMEOUT).build())) {
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                    () -> c.lock("nowhere").tryAcquire(Duration.ofSeconds(10)));
            assertTrue(e.getMessage().contains("cannot connect to Redis at " + uri.substring("redis://".length())),
                    e.getMessage());
            assertTrue(e.getMessage().contains("lock 'nowhere'"), e.getMessage());
            assertTrue(e.retryable(), "an unreachable server may come back: " + e);
            assertEquals(Optional.of("nowhere"), e.lockName());
            assertThrowsWithin(LockBackendException.class, FAIL_BOUND, () -> c.holder("nowhere"));
        }
    }

    @Test
    void pausedServerFailsWithinTheOperationTimeoutAndTheClientRecovers() throws Exception {
        try (LockClient c = client()) {
            c.lock("warm").tryAcquire().orElseThrow().release(); // a pooled connection exists
            server.pause();
            try {
                LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                        () -> c.lock("paused").tryAcquire(Duration.ofSeconds(10)));
                assertTrue(e.getMessage().contains("did not answer"), e.getMessage());
                assertTrue(e.retryable(), "a paused server may resume: " + e);
                assertThrowsWithin(LockBackendException.class, FAIL_BOUND, () -> c.holder("paused"));
                try (LockClient fresh = client()) {
                    // a new connection: the kernel accepts it, the stopped server never answers
                    assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                            () -> fresh.lock("paused").tryAcquire(Duration.ofSeconds(10)));
                }
            } finally {
                server.resume();
            }
            // "paused" may now be held: the stopped server had the timed-out requests in its buffers
            // and ran them on resume, and undoing them failed while it was stopped; such a lock ends
            // by expiry. Another name shows the client works again.
            Lease lease = c.lock("after-pause").tryAcquire(Duration.ofSeconds(5)).orElseThrow();
            assertTrue(lease.isValid());
            lease.release();
        }
    }

    @Test
    void abandonUndoesAGrantWhoseAnswerWasLost() throws Exception {
        LockBackend<Void> backend = openBackend(server.uri(), Duration.ofMillis(500));
        try (Jedis jedis = TestSupport.jedis(server)) {
            AcquireAttempt<Void> warm = backend.newAttempt(request("warm", Duration.ofSeconds(30)));
            assertTrue(isGranted(warm.tryOnce()));
            AcquireRequest r = request("lost-answer", Duration.ofSeconds(30));
            AcquireAttempt<Void> attempt = backend.newAttempt(r);
            server.pause();
            try {
                assertThrowsWithin(LockBackendException.class, FAIL_BOUND, attempt::tryOnce);
            } finally {
                server.resume();
            }
            // the stopped server still had the request in its socket buffer: it runs it on resume
            await("the server ran the acquire whose answer was lost", Duration.ofSeconds(5),
                    () -> jedis.exists("dlock:lock:lost-answer"));
            assertTrue(jedis.get("dlock:lock:lost-answer").startsWith(r.ownerId() + ":"));
            attempt.abandon();
            assertFalse(jedis.exists("dlock:lock:lost-answer"), "abandon() released the grant nobody received");
            attempt.abandon(); // idempotent
        } finally {
            backend.close();
        }
    }

    @Test
    void anUndoThatFailsTooIsRetriedInTheBackground() throws Exception {
        LockBackend<Void> backend = openBackend(server.uri(), Duration.ofMillis(500));
        try (Jedis jedis = TestSupport.jedis(server)) {
            assertTrue(isGranted(backend.newAttempt(request("warm", Duration.ofSeconds(30))).tryOnce()));
            AcquireRequest r = request("lost-undo", Duration.ofSeconds(30));
            AcquireAttempt<Void> attempt = backend.newAttempt(r);
            server.pause();
            try {
                assertThrowsWithin(LockBackendException.class, FAIL_BOUND, attempt::tryOnce);
                attempt.abandon(); // fails too: the server answers nothing
            } finally {
                server.resume();
            }
            // the stopped server ran the acquire on resume; the undo is retried until it is answered.
            // Generous for a loaded machine, and far below the 30 s lease that would end it otherwise
            await("the grant nobody received was undone in the background", Duration.ofSeconds(10),
                    () -> !jedis.exists("dlock:lock:lost-undo"));
        } finally {
            backend.close();
        }
    }

    /**
     * A release whose request is lost (a network that drops it, not a paused server, which would
     * run it on resume) is retried in the background: the lock is free soon after the network
     * heals, not only when its 30 s lease ends. Before, the key stayed until its lease ended.
     */
    @Test
    void aReleaseThatGetsNoAnswerIsRetriedInTheBackground() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(server.address()); Jedis jedis = TestSupport.jedis(server)) {
            LockBackend<Void> backend = openBackend("redis://" + proxy.address().getHostString() + ":"
                    + proxy.address().getPort(), Duration.ofMillis(500));
            try {
                AcquireRequest r = request("lost-release", Duration.ofSeconds(30));
                Grant<Void> grant = grant(r, backend.newAttempt(r).tryOnce());
                proxy.inject(NetworkFault.BLACK_HOLE);
                try {
                    assertThrowsWithin(LockBackendException.class, FAIL_BOUND, () -> backend.release(grant));
                    assertTrue(jedis.exists("dlock:lock:lost-release"), "the dropped release did not reach the server");
                } finally {
                    proxy.heal();
                }
                // generous for a loaded machine, far below the 30 s lease that would end it otherwise
                await("the release was retried once the network healed", Duration.ofSeconds(10),
                        () -> !jedis.exists("dlock:lock:lost-release"));
            } finally {
                backend.close();
            }
        }
    }

    /**
     * The interrupt rule where a Redis call waits for a pooled connection (the only wait of this
     * backend that gives in to interrupts): the call throws {@link LockBackendException} and the
     * thread's interrupt flag stays set, so that the core reports an interrupt, not a failure.
     * Before, the pool's {@code InterruptedException} (which clears the flag) was reported as a
     * failure like any other, and the interrupt was lost.
     */
    @Test
    void aCallInterruptedWhileItWaitsForAConnectionKeepsTheInterruptFlag() throws Exception {
        Duration timeout = Duration.ofSeconds(5);
        LockBackend<Void> backend = openBackend(server.uri() + "?poolSize=1", timeout);
        try {
            assertTrue(isGranted(backend.newAttempt(request("warm", Duration.ofSeconds(30))).tryOnce()));
            server.pause();
            try {
                // takes the only connection and waits for an answer the stopped server never gives
                Thread first = new Thread(() -> {
                    try {
                        backend.holder("a");
                    } catch (LockBackendException e) {
                        // no answer in time, or an answer once resumed: either way it held the connection
                    }
                });
                first.setDaemon(true);
                first.start();
                TestTiming.sleep(300); // the first call is in its read
                AtomicReference<Throwable> thrown = new AtomicReference<>();
                AtomicBoolean flag = new AtomicBoolean();
                Thread second = new Thread(() -> {
                    try {
                        backend.holder("b");
                    } catch (Throwable t) {
                        thrown.set(t);
                    }
                    flag.set(Thread.currentThread().isInterrupted());
                });
                second.setDaemon(true);
                second.start();
                await("the second call waits for the pooled connection", Duration.ofSeconds(3),
                        () -> second.getState() == Thread.State.TIMED_WAITING);
                second.interrupt();
                second.join(timeout.plusSeconds(5).toMillis());
                assertFalse(second.isAlive());
                assertTrue(thrown.get() instanceof LockBackendException, String.valueOf(thrown.get()));
                assertTrue(flag.get(), "the interrupt flag is kept: " + thrown.get().getMessage());
                assertTrue(thrown.get().getMessage().contains("interrupted"), thrown.get().getMessage());
            } finally {
                server.resume();
            }
        } finally {
            backend.close();
        }
    }

    @Test
    void waitersAreWokenWhenThePubSubConnectionBreaksAndNotificationsResumeAfterARestart() throws Exception {
        LockBackend<Void> holder = openBackend(server.uri() + SHORT_LOCK_DELAY_URI, OP_TIMEOUT);
        LockBackend<Void> waiter = openBackend(server.uri() + SHORT_LOCK_DELAY_URI, OP_TIMEOUT);
        try {
            assertTrue(isGranted(holder.newAttempt(request("failover", SHORT_LOCK_DELAY)).tryOnce()));
            AcquireAttempt<Void> attempt = waiter.newAttempt(request("failover", SHORT_LOCK_DELAY));
            assertFalse(isGranted(attempt.tryOnce()));
            assertTrue(awaitTurn(attempt, Duration.ofSeconds(10)), "subscribed");
            assertFalse(isGranted(attempt.tryOnce()));

            server.kill(); // the lock dies with the data, and no release is ever published
            long t0 = System.nanoTime();
            awaitTurn(attempt, Duration.ofSeconds(20));
            long woke = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            // the broken pub/sub connection wakes the waiter so that it polls; 20 s otherwise
            assertTrue(woke < 5000, "woken " + woke + " ms after the pub/sub connection broke");
            server.restart();
            // the restarted server lost the lock, and refuses it to anyone for the lock-delay
            io.dlock.spi.AttemptResult<Void> delayed = attempt.tryOnce();
            assertFalse(isGranted(delayed), "granted at once by a server that lost its locks");
            assertTrue(((io.dlock.spi.AttemptResult.Busy<Void>) delayed).retryAfter().orElseThrow().compareTo(SHORT_LOCK_DELAY) <= 0, delayed.toString());
            await("the lock-delay passes", AFTER_LOCK_DELAY, () -> isGranted(attempt.tryOnce()));

            // the waiter's pub/sub connection is made again on a later turn (at most once a second): as the core
            // does, try again whenever a turn ends, until the subscription is back
            AcquireRequest rh = request("after-restart", SHORT_LOCK_DELAY);
            io.dlock.spi.AttemptResult<Void> gh = holder.newAttempt(rh).tryOnce();
            assertTrue(isGranted(gh));
            AcquireAttempt<Void> next = waiter.newAttempt(request("after-restart", SHORT_LOCK_DELAY));
            assertFalse(isGranted(next.tryOnce()));
            String channel = "dlock:released:after-restart";
            try (Jedis jedis = TestSupport.jedis(server)) {
                await("subscribed again after the restart", Duration.ofSeconds(10), () -> {
                    try {
                        awaitTurn(next, Duration.ofMillis(200));
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                    assertFalse(isGranted(next.tryOnce()));
                    return jedis.pubsubNumSub(channel).get(channel) == 1L;
                });
            }
            long[] releasedAt = new long[1];
            Thread releaser = new Thread(() -> {
                TestTiming.sleep(300);
                released(holder.release(new Grant<>(rh.name(), rh.ownerId(), token(gh), rh.leaseTime(),
                        granted(gh).state())));
                releasedAt[0] = System.nanoTime();
            });
            releaser.start();
            // only a notice can end a 20 s turn this early; a turn that ends on the subscription's confirmation
            // (the try before it began before the client had it) is followed by another try and turn, as the core does
            long wokeAt;
            while (true) {
                assertTrue(awaitTurn(next, Duration.ofSeconds(20)), "no notice within 20 s");
                wokeAt = System.nanoTime();
                if (isGranted(next.tryOnce())) {
                    break;
                }
            }
            releaser.join();
            long afterRelease = TimeUnit.NANOSECONDS.toMillis(wokeAt - releasedAt[0]);
            // generous bound for a loaded machine; without a notice the wait would last 20 s
            assertTrue(afterRelease < 1000, "woken " + afterRelease + " ms after the release");
        } finally {
            holder.close();
            waiter.close();
        }
    }
}
