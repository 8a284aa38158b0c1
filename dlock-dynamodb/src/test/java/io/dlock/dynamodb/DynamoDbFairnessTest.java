package io.dlock.dynamodb;

import static io.dlock.tck.SpiAnswers.*;

import static io.dlock.dynamodb.TestSupport.client;
import static io.dlock.dynamodb.TestSupport.newTable;
import static io.dlock.dynamodb.TestSupport.openBackend;
import static io.dlock.dynamodb.TestSupport.request;
import static io.dlock.dynamodb.TestSupport.uri;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Capability;
import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.Ticker;
import io.dlock.dynamodb.TestSupport.ManualTicker;
import io.dlock.dynamodb.internal.DynamoDbLockBackend;
import io.dlock.spi.Grant;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.tck.TestTiming;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.exception.NonRetryableException;
import software.amazon.awssdk.core.exception.RetryableException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * Waiters get their turn: clients that take one lock in a tight loop do not starve each other, a
 * client that releases and asks again queues behind the waiters, a waiter that died or stalled in
 * line is skipped after its ticket time on the skipper's own ticker (never before), and lost
 * answers neither grant twice nor leave a ticket behind. One DynamoDB Local for the class.
 */
class DynamoDbFairnessTest {

    private static DynamoDbLocal server;
    private static String table;

    @BeforeAll
    static void start() {
        server = DynamoDbLocal.start();
        table = newTable("fairness");
        try (LockClient c = client(uri(server, table))) {
            assertTrue(c.capabilities().contains(Capability.FENCING)); // opening it created the table
        }
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static String plainUri() {
        return DynamoDbFixture.uri(table, DynamoDbLocal.HOST + ":" + server.port());
    }

    /** What one contender saw. */
    private static final class Contender {
        final List<Long> waitsMillis = Collections.synchronizedList(new ArrayList<>());
        volatile long maxWaitMillis;
        volatile int timeouts;
        volatile long lastGrantAt;
        volatile long longestGapMillis;
    }

    /**
     * Three clients each loop: acquire, hold 5 ms, release, ask again at once, for 15 s. Before
     * waiters queued in the item, the client that had just released always won the free lock again
     * (its write comes a millisecond after its release, a waiter's poll up to 200 ms later), and the
     * other two went without a grant for the whole run.
     */
    @Test
    void threeClientsInATightLoopEachGetTheLockWithinABoundedWait() throws Exception {
        String name = "tight-loop";
        Duration lease = Duration.ofSeconds(1);
        Duration hold = Duration.ofMillis(5);
        Duration run = Duration.ofSeconds(15);
        // The bound on one wait. At most two others are ahead of a waiter; each holds 5 ms and hands
        // over within a poll (the first two in line poll every 10 ms or so after a change of hands,
        // the client's retry base) and a few round trips. A waiter whose polls stall longer than its
        // ticket time (800 ms here: four of its longest, 200 ms, polls) loses its place and queues
        // again behind at most two others. So a wait is tens of ms, and about 2 s in the worst case
        // that the design allows. 5 lease times plus the hold each leave room for the shared 2-core
        // machine, where a DynamoDB Local answer occasionally takes over a second (see DynamoDbFixture).
        Duration bound = lease.plus(hold).multipliedBy(5);
        LockOptions options = LockOptions.builder().leaseTime(lease).build();
        AtomicInteger holders = new AtomicInteger();
        AtomicReference<String> violation = new AtomicReference<>();
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        List<Contender> contenders = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        List<LockClient> clients = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                clients.add(client(plainUri()));
                contenders.add(new Contender());
            }
            long start = System.nanoTime();
            long end = start + run.toNanos();
            for (int i = 0; i < 3; i++) {
                contenders.get(i).lastGrantAt = start;
            }
            for (int i = 0; i < 3; i++) {
                LockClient c = clients.get(i);
                Contender me = contenders.get(i);
                Thread t = new Thread(() -> {
                    try {
                        while (System.nanoTime() - end < 0) {
                            long asked = System.nanoTime();
                            Optional<Lease> got = c.lock(name, options).tryAcquire(bound);
                            long waited = (System.nanoTime() - asked) / 1_000_000;
                            me.maxWaitMillis = Math.max(me.maxWaitMillis, waited);
                            if (got.isEmpty()) {
                                me.timeouts++;
                                continue;
                            }
                            me.waitsMillis.add(waited);
                            long now = System.nanoTime();
                            me.longestGapMillis = Math.max(me.longestGapMillis, (now - me.lastGrantAt) / 1_000_000);
                            me.lastGrantAt = now;
                            try (Lease l = got.get()) {
                                if (holders.incrementAndGet() != 1) {
                                    violation.compareAndSet(null, "two holders at once");
                                }
                                synchronized (tokens) {
                                    if (!tokens.isEmpty() && tokens.get(tokens.size() - 1) >= l.fencingToken()) {
                                        violation.compareAndSet(null, "token " + l.fencingToken() + " after "
                                                + tokens.get(tokens.size() - 1));
                                    }
                                    tokens.add(l.fencingToken());
                                }
                                TestTiming.sleep(hold.toMillis());
                                holders.decrementAndGet();
                            }
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } catch (RuntimeException e) {
                        violation.compareAndSet(null, TestSupport.everything(e));
                    }
                }, "contender-" + i);
                threads.add(t);
                t.start();
            }
            for (Thread t : threads) {
                t.join(run.plus(bound).plusSeconds(10).toMillis());
                assertTrue(!t.isAlive(), t.getName() + " still running");
            }
        } finally {
            for (Thread t : threads) {
                t.interrupt();
            }
            for (LockClient c : clients) {
                c.close();
            }
        }
        StringBuilder figures = new StringBuilder();
        for (int i = 0; i < 3; i++) {
            Contender c = contenders.get(i);
            List<Long> sorted;
            synchronized (c.waitsMillis) {
                sorted = new ArrayList<>(c.waitsMillis);
            }
            Collections.sort(sorted);
            figures.append(String.format("client %d: %d grants, %d timeouts (%d ms each), wait p50 %d ms, p99 %d ms, "
                    + "max %d ms, longest time without a grant %d ms%n", i, sorted.size(), c.timeouts, bound.toMillis(),
                    sorted.isEmpty() ? -1 : sorted.get(sorted.size() / 2),
                    sorted.isEmpty() ? -1 : sorted.get(sorted.size() * 99 / 100), c.maxWaitMillis,
                    Math.max(c.longestGapMillis, (System.nanoTime() - c.lastGrantAt) / 1_000_000)));
        }
        System.out.print("DynamoDbFairnessTest tight loop, 3 clients, 15 s:\n" + figures);
        assertEquals(null, violation.get(), figures.toString());
        for (int i = 0; i < 3; i++) {
            Contender c = contenders.get(i);
            assertEquals(0, c.timeouts, "client " + i + " waited longer than " + bound + ":\n" + figures);
            // every client gets grants throughout; 10 in 15 s is far below what a fair share gives
            assertTrue(c.waitsMillis.size() >= 10, "client " + i + " starved:\n" + figures);
        }
    }

    /**
     * A waiter queues its ticket and dies without taking it out of the line. The free lock is not
     * taken past the ticket while its ticket time runs on the other client's clock, and is taken
     * soon after.
     */
    @Test
    void aCrashedWaitersTicketHoldsTheLockNoLongerThanItsTicketTime() throws Exception {
        String name = "crashed-waiter";
        // the dead waiter's ticket time: its lease time, as four of its longest polls (1 s each by default) are longer
        Duration ticketTime = Duration.ofSeconds(1);
        try (LockClient holder = client(plainUri()); LockClient other = client(plainUri())) {
            Lease held = holder.lock(name).tryAcquire().orElseThrow();
            AcquireRequest dead = request(name, ticketTime);
            queueAndCrash(dead);
            long releasedAt = System.nanoTime();
            held.release();
            assertTrue(other.lock(name).tryAcquire().isEmpty(), "the free lock was taken past a ticket in line");
            // generous: the ticket time, then a poll (200 ms cap here) and a few round trips; 2 s more for a
            // loaded machine
            Lease next = other.lock(name).tryAcquire(ticketTime.plusSeconds(2)).orElseThrow(
                    () -> new AssertionError("the dead waiter's ticket kept the lock from others"));
            long after = System.nanoTime() - releasedAt;
            // the other client first saw the ticket first in line after the release, and counts from there
            assertTrue(after >= ticketTime.toNanos(), "the ticket was skipped after only " + after / 1_000_000 + " ms");
            assertEquals(List.of(), line(name), "the dead ticket left the line");
            next.release();
        }
    }

    /**
     * A holder and the waiter behind it both die. Repeated zero-wait tries, which never queue,
     * still get the lock: each remembers what earlier ones saw, takes the dead waiter's ticket out
     * of the line once the holder's lease and then the ticket time have passed, and then takes over
     * the holder's lock.
     */
    @Test
    void repeatedZeroWaitTriesGetPastACrashedHolderAndACrashedWaiter() throws Exception {
        String name = "crashed-both";
        Duration lease = Duration.ofSeconds(1);
        try (LockClient poller = client(plainUri())) {
            // a client would release when its lease ran out on its own clock; a process that died does not
            DynamoDbLockBackend crashed = openBackend(plainUri(), Duration.ofSeconds(2));
            assertTrue(isGranted(crashed.newAttempt(request(name, lease)).tryOnce()));
            crashed.close();
            queueAndCrash(request(name, lease));
            long firstTry = System.nanoTime();
            Optional<Lease> got = Optional.empty();
            // generous: the lease, then the ticket time, 2 s more for a loaded machine
            long deadline = firstTry + lease.multipliedBy(2).plusSeconds(2).toNanos();
            while (got.isEmpty() && System.nanoTime() - deadline < 0) {
                got = poller.lock(name).tryAcquire();
                if (got.isEmpty()) {
                    TestTiming.sleep(100);
                }
            }
            long after = System.nanoTime() - firstTry;
            assertTrue(got.isPresent(), "tryAcquire() every 100 ms never got past the dead holder and waiter");
            assertTrue(after >= lease.multipliedBy(2).toNanos(), "taken " + after / 1_000_000 + " ms after the first try");
            assertEquals(List.of(), line(name));
            got.get().release();
        }
    }

    @Test
    void aClientThatReleasesAndAsksAgainQueuesBehindTheWaiter() throws Exception {
        String name = "barging";
        Duration lease = Duration.ofSeconds(5);
        try (DynamoDbLockBackend a = openBackend(plainUri(), Duration.ofSeconds(2));
             DynamoDbLockBackend b = openBackend(plainUri(), Duration.ofSeconds(2))) {
            AcquireRequest first = request(name, lease);
            AttemptResult<Void> held = a.newAttempt(first).tryOnce();
            assertTrue(isGranted(held));
            AcquireRequest waiting = request(name, lease);
            AcquireAttempt<Void> waiter = b.newAttempt(waiting);
            assertFalse(isGranted(waiter.tryOnce()), "the optimistic write");
            assertFalse(isGranted(waiter.tryOnce()), "a read, then a ticket in line");
            assertEquals(1, line(name).size());
            assertTrue(released(a.release(new Grant<Void>(name, first.ownerId(), token(held), lease, null))));

            // the releasing client asks again at once: the lock is free, but a ticket is in line
            AcquireAttempt<Void> again = a.newAttempt(request(name, lease));
            AttemptResult<Void> r = again.tryOnce();
            assertFalse(isGranted(r), "the client that released took the lock past the waiter");
            assertFalse(isGranted(again.tryOnce()), "a second try queues behind the waiter");
            List<String> line = line(name);
            assertEquals(2, line.size(), line.toString());
            assertTrue(line.get(0).startsWith(waiting.ownerId()), line.toString());

            AttemptResult<Void> turn = waiter.tryOnce();
            assertTrue(isGranted(turn), "the waiter first in line");
            assertEquals(token(held) + 1, token(turn));
            assertEquals(1, line(name).size(), "the grant took the waiter's ticket out of the line");
            again.abandon();
            assertEquals(List.of(), line(name), "abandon() took the other ticket out of the line");
            assertTrue(released(b.release(new Grant<Void>(name, waiting.ownerId(), token(turn), lease, null))));
        }
    }

    @Test
    void aWaiterFirstInLineIsSkippedExactlyAfterItsTicketTimeOnTheSkippersTicker() throws Exception {
        String name = "skip-rule";
        Duration lease = Duration.ofMillis(500); // the ticket time: shorter than four 1 s polls (the default cap)
        ManualTicker ticker = new ManualTicker();
        try (DynamoDbLockBackend a = openBackend(plainUri(), Duration.ofSeconds(2));
             DynamoDbLockBackend b = openBackend(plainUri(), Duration.ofSeconds(2));
             DynamoDbLockBackend c = openBackend(plainUri(), Duration.ofSeconds(2), ticker, Clock.systemUTC(),
                     x -> { })) {
            AcquireRequest first = request(name, lease);
            AttemptResult<Void> held = a.newAttempt(first).tryOnce();
            AcquireRequest slow = request(name, lease);
            AcquireAttempt<Void> stalled = b.newAttempt(slow);
            assertFalse(isGranted(stalled.tryOnce()));
            assertFalse(isGranted(stalled.tryOnce())); // in line, then it stops polling
            assertTrue(released(a.release(new Grant<Void>(name, first.ownerId(), token(held), lease, null))));

            AcquireAttempt<Void> skipper = c.newAttempt(request(name, lease));
            AttemptResult<Void> r = skipper.tryOnce();
            assertFalse(isGranted(r));
            assertEquals(lease, ((AttemptResult.Busy<Void>) r).retryAfter().orElseThrow(), "the whole ticket time is left on the skipper's ticker");
            TestTiming.sleep(lease.toMillis() * 2); // real time passes; the skipper's ticker stands still
            assertFalse(isGranted(skipper.tryOnce()), "it queues behind the ticket");
            ticker.advance(lease.minusMillis(1));
            r = skipper.tryOnce();
            assertFalse(isGranted(r));
            assertEquals(2, line(name).size(), "skipped 1 ms before the ticket time passed on the skipper's ticker");
            assertEquals(Duration.ofMillis(1), ((AttemptResult.Busy<Void>) r).retryAfter().orElseThrow());
            ticker.advance(Duration.ofMillis(1));
            assertFalse(isGranted(skipper.tryOnce()), "a skip is a write of its own");
            assertEquals(1, line(name).size(), "not skipped once the ticket time passed");
            AttemptResult<Void> turn = skipper.tryOnce();
            assertTrue(isGranted(turn));
            assertEquals(token(held) + 1, token(turn));

            // the stalled waiter comes back: its ticket is gone, so it queues again, behind nobody
            assertFalse(isGranted(stalled.tryOnce()));
            List<String> line = line(name);
            assertEquals(1, line.size(), line.toString());
            assertTrue(line.get(0).startsWith(slow.ownerId()), line.toString());
            stalled.abandon();
            assertEquals(List.of(), line(name));
        }
    }

    /**
     * A grant applied by DynamoDB whose answer is lost, so that the SDK sends the same request
     * again: the retry fails its condition, and the item returned with the failure shows the
     * attempt's own owner id and record version. That is one grant with one token, not an error
     * and not a second grant.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"free lock", "first in line"})
    void aGrantWhoseAnswerWasLostAndThatTheSdkSentAgainIsOneGrant(String how) throws Exception {
        String name = "retried-" + how.replace(' ', '-');
        Duration lease = Duration.ofSeconds(5);
        LoseOnce lose = new LoseOnce(u -> u.updateExpression().startsWith("SET #o"), true);
        try (DynamoDbLockBackend a = openBackend(plainUri(), Duration.ofSeconds(2));
             DynamoDbLockBackend b = openBackend(plainUri(), Duration.ofSeconds(2), Ticker.system(),
                     Clock.systemUTC(), x -> x.addExecutionInterceptor(lose))) {
            AcquireRequest first = request(name, lease);
            AttemptResult<Void> held = a.newAttempt(first).tryOnce();
            AcquireRequest waiting = request(name, lease);
            AcquireAttempt<Void> attempt = b.newAttempt(waiting);
            if (how.equals("free lock")) {
                assertTrue(released(a.release(new Grant<Void>(name, first.ownerId(), token(held), lease, null))));
            } else {
                assertFalse(isGranted(attempt.tryOnce()));
                assertFalse(isGranted(attempt.tryOnce())); // in line
                assertTrue(released(a.release(new Grant<Void>(name, first.ownerId(), token(held), lease, null))));
            }
            lose.armed = true;
            AttemptResult<Void> r = attempt.tryOnce();
            assertEquals(1, lose.fired, "the answer was lost once");
            assertTrue(isGranted(r), "the retried grant");
            assertEquals(token(held) + 1, token(r), "one grant, one token");
            var item = TestSupport.item(server, table, name);
            assertEquals(waiting.ownerId(), item.get("owner").s());
            assertEquals(Long.toString(token(held) + 1), item.get("token").n());
            assertEquals(List.of(), line(name));
            assertTrue(released(b.release(new Grant<Void>(name, waiting.ownerId(), token(r), lease, null))));
        }
    }

    @Test
    void abandonTakesOutATicketWhoseAnswerWasLost() throws Exception {
        String name = "lost-ticket";
        Duration lease = Duration.ofSeconds(5);
        LoseOnce lose = new LoseOnce(u -> u.updateExpression().contains("list_append"), false);
        try (DynamoDbLockBackend a = openBackend(plainUri(), Duration.ofSeconds(2));
             DynamoDbLockBackend b = openBackend(plainUri(), Duration.ofSeconds(2), Ticker.system(),
                     Clock.systemUTC(), x -> x.addExecutionInterceptor(lose))) {
            AcquireRequest first = request(name, lease);
            AttemptResult<Void> held = a.newAttempt(first).tryOnce();
            AcquireRequest waiting = request(name, lease);
            AcquireAttempt<Void> attempt = b.newAttempt(waiting);
            assertFalse(isGranted(attempt.tryOnce()));
            lose.armed = true;
            assertThrows(LockBackendException.class, attempt::tryOnce);
            assertEquals(1, lose.fired);
            List<String> line = line(name);
            assertEquals(1, line.size(), "DynamoDB queued the ticket: " + line);
            assertTrue(line.get(0).startsWith(waiting.ownerId()), line.toString());
            attempt.abandon(); // what the core does after a backend error
            assertEquals(List.of(), line(name), "abandon() took the ticket nobody was told of out of the line");
            assertTrue(released(a.release(new Grant<Void>(name, first.ownerId(), token(held), lease, null))));
        }
    }

    /**
     * Loses the answer of the next matching UpdateItem once armed: the request reaches DynamoDB and
     * is applied, then the client sees an error, which the SDK retries or not.
     */
    private static final class LoseOnce implements ExecutionInterceptor {
        private final Predicate<UpdateItemRequest> matches;
        private final boolean retryable;
        volatile boolean armed;
        volatile int fired;

        LoseOnce(Predicate<UpdateItemRequest> matches, boolean retryable) {
            this.matches = matches;
            this.retryable = retryable;
        }

        @Override
        public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
            if (armed && context.request() instanceof UpdateItemRequest u && matches.test(u)) {
                armed = false;
                fired++;
                throw retryable ? RetryableException.create("test: the answer was lost")
                        : NonRetryableException.create("test: the answer was lost");
            }
        }
    }

    /** Queues a ticket for the request on a held lock, then closes the backend without abandoning. */
    private static void queueAndCrash(AcquireRequest request) {
        DynamoDbLockBackend backend = openBackend(plainUri(), Duration.ofSeconds(2));
        try {
            AcquireAttempt<Void> attempt = backend.newAttempt(request);
            assertFalse(isGranted(attempt.tryOnce()), "the optimistic write");
            assertFalse(isGranted(attempt.tryOnce()), "a read, then a ticket in line");
            List<String> line = line(request.name());
            assertEquals(1, line.size(), line.toString());
            assertTrue(line.get(0).startsWith(request.ownerId()), line.toString());
        } finally {
            backend.close(); // gone without abandon(), like a process that died while waiting
        }
    }

    /** The tickets in a lock's line. */
    private static List<String> line(String name) {
        AttributeValue q = TestSupport.item(server, table, name).get("queue");
        List<String> out = new ArrayList<>();
        if (q != null) {
            q.l().forEach(t -> out.add(t.s()));
        }
        return out;
    }
}
