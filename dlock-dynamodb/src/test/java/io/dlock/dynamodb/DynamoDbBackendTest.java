package io.dlock.dynamodb;

import static io.dlock.tck.SpiAnswers.*;

import io.dlock.tck.TestTiming;

import static io.dlock.dynamodb.TestSupport.client;
import static io.dlock.dynamodb.TestSupport.item;
import static io.dlock.dynamodb.TestSupport.newTable;
import static io.dlock.dynamodb.TestSupport.openBackend;
import static io.dlock.dynamodb.TestSupport.request;
import static io.dlock.dynamodb.TestSupport.uri;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Capability;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockHolder;
import io.dlock.LockOptions;
import io.dlock.Ticker;
import io.dlock.dynamodb.TestSupport.ManualTicker;
import io.dlock.dynamodb.TestSupport.RequestCounter;
import io.dlock.dynamodb.internal.DynamoDbLockBackend;
import io.dlock.spi.Grant;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The backend against DynamoDB Local: request counts, tokens, owner checks, the waiter rule with
 * skewed wall clocks and a hand-driven ticker, crashed holders, holder queries and batched
 * renewal. One server for the class; each test uses its own table or lock names.
 */
class DynamoDbBackendTest {

    private static DynamoDbLocal server;
    private static String table;

    @BeforeAll
    static void start() {
        server = DynamoDbLocal.start();
        table = newTable("backend");
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

    /** A URI for the class's table that does not look the table up on open. */
    private static String plainUri() {
        return DynamoDbFixture.uri(table, DynamoDbLocal.HOST + ":" + server.port());
    }

    private static DynamoDbLockBackend backend(Ticker ticker, Clock clock) {
        return openBackend(plainUri(), Duration.ofSeconds(1), ticker, clock, b -> { });
    }

    private static LockOptions noRenew(Duration lease) {
        return LockOptions.builder().leaseTime(lease).autoRenew(false).build();
    }

    @Test
    void uncontendedAcquireAndReleaseTakeTwoRequests() throws Exception {
        RequestCounter counter = new RequestCounter();
        LockClientConfig config = LockClientConfig.builder(plainUri()).operationTimeout(Duration.ofSeconds(1)).build();
        try (LockClient c = LockClient.open(config, TestSupport.countingProvider(counter))) {
            assertEquals(0, counter.total(), "opening without createTable makes no request");
            for (int i = 0; i < 5; i++) {
                counter.reset();
                Lease lease = c.lock("two-requests-" + i).tryAcquire().orElseThrow();
                lease.release();
                assertEquals(2, counter.total(), "one acquire and one release: " + counter);
                assertEquals(2, counter.of("UpdateItem"), counter.toString());
            }
        }
    }

    @Test
    void aBusyTryIsOneRequestAndAWaiterPollsWithReads() throws Exception {
        RequestCounter counter = new RequestCounter();
        LockClientConfig config = LockClientConfig.builder(plainUri()).operationTimeout(Duration.ofSeconds(1))
                .retry(Duration.ofMillis(10), Duration.ofMillis(100)).build();
        try (LockClient holder = client(plainUri());
             LockClient waiter = LockClient.open(config, TestSupport.countingProvider(counter))) {
            Lease held = holder.lock("busy").tryAcquire().orElseThrow();
            assertTrue(waiter.lock("busy").tryAcquire().isEmpty());
            // the failed condition returns the item (ReturnValuesOnConditionCheckFailure): no extra read
            assertEquals(1, counter.total(), counter.toString());
            counter.reset();
            assertTrue(waiter.lock("busy", LockOptions.builder().leaseTime(Duration.ofSeconds(5)).build())
                    .tryAcquire(Duration.ofMillis(600)).isEmpty());
            // one optimistic write, one write that queues a ticket, then consistent reads only (the holder's
            // record version never ripens), and one write that takes the ticket out of the line on giving up
            assertEquals(3, counter.of("UpdateItem"), counter.toString());
            assertTrue(counter.of("GetItem") >= 2, counter.toString());
            Map<String, AttributeValue> after = item(server, table, "busy");
            assertTrue(after.get("queue") == null || after.get("queue").l().isEmpty(), "a ticket left in line: " + after);
            held.release();
        }
    }

    @Test
    void tokensStrictlyIncreaseAcrossClientsReleasesAndTakeovers() throws Exception {
        String name = "tokens";
        List<Long> tokens = new ArrayList<>();
        try (LockClient a = client(plainUri()); LockClient b = client(plainUri())) {
            for (LockClient c : List.of(a, b, a, b)) {
                try (Lease l = c.lock(name).tryAcquire(Duration.ofSeconds(2)).orElseThrow()) {
                    tokens.add(l.fencingToken());
                }
            }
            Lease expiring = a.lock(name, noRenew(Duration.ofMillis(500))).tryAcquire().orElseThrow();
            tokens.add(expiring.fencingToken());
            try (Lease l = b.lock(name).tryAcquire(Duration.ofSeconds(3)).orElseThrow()) {
                tokens.add(l.fencingToken());
            }
        }
        try (LockClient restarted = client(plainUri())) {
            try (Lease l = restarted.lock(name).tryAcquire(Duration.ofSeconds(2)).orElseThrow()) {
                tokens.add(l.fencingToken());
            }
        }
        for (int i = 1; i < tokens.size(); i++) {
            assertTrue(tokens.get(i) > tokens.get(i - 1), "tokens in grant order: " + tokens);
        }
        // the released item keeps its counter and has no owner
        Map<String, AttributeValue> released = item(server, table, name);
        assertEquals(Long.toString(tokens.get(tokens.size() - 1)), released.get("token").n());
        assertNull(released.get("owner"), released.toString());
        assertNull(released.get("leaseMs"), released.toString());
    }

    @Test
    void staleReleaseAndRenewLeaveTheNewHolderAlone() throws Exception {
        String name = "stale";
        Duration lease = Duration.ofMillis(300);
        try (DynamoDbLockBackend a = backend(Ticker.system(), Clock.systemUTC());
             DynamoDbLockBackend b = backend(Ticker.system(), Clock.systemUTC())) {
            AcquireRequest ra = request(name, lease);
            AttemptResult<Void> first = a.newAttempt(ra).tryOnce();
            assertTrue(isGranted(first));
            AcquireRequest rb = request(name, lease);
            AttemptResult<Void> second = takeOver(b.newAttempt(rb), Duration.ofSeconds(3));
            assertTrue(token(second) > token(first));
            Map<String, AttributeValue> before = item(server, table, name);

            Grant<Void> stale = new Grant<Void>(name, ra.ownerId(), token(first), lease, null);
            assertFalse(released(a.release(stale)), "a release by the superseded grant");
            assertArrayEquals(new boolean[] {false}, renewed(a.renew(List.of(stale))), "a renewal by the superseded grant");
            assertArrayEquals(new boolean[] {false, false}, renewed(a.renew(List.of(stale, stale))));
            // a stale owner with the current token, or the current owner with a stale token, changes nothing either
            assertFalse(released(a.release(new Grant<Void>(name, ra.ownerId(), token(second), lease, null))));
            assertFalse(released(a.release(new Grant<Void>(name, rb.ownerId(), token(first), lease, null))));

            assertEquals(before, item(server, table, name), "the stale calls did not write");
            LockHolder h = b.holder(name).orElseThrow();
            assertEquals(rb.ownerId(), h.ownerId());
            assertEquals(token(second), h.fencingToken());
            assertTrue(released(b.release(new Grant<Void>(name, rb.ownerId(), token(second), lease, null))));
            assertFalse(released(b.release(new Grant<Void>(name, rb.ownerId(), token(second), lease, null))), "released once");
        }
    }

    /** Tries until granted, sleeping as the core would, at most {@code max}. */
    private static AttemptResult<Void> takeOver(AcquireAttempt<Void> attempt, Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (true) {
            AttemptResult<Void> r = attempt.tryOnce();
            if (isGranted(r)) {
                return r;
            }
            assertTrue(System.nanoTime() - deadline < 0, "not granted within " + max);
            Duration hint = ((AttemptResult.Busy<Void>) r).retryAfter().orElse(Duration.ofMillis(20));
            awaitTurn(attempt, hint.compareTo(Duration.ofMillis(50)) < 0 ? hint.plusMillis(1) : Duration.ofMillis(50));
        }
    }

    @ParameterizedTest(name = "holder clock skewed {0} h")
    @ValueSource(ints = {1, -1})
    void theWaiterRuleCountsOnTheWaitersTickerOnly(int skewHours) throws Exception {
        String name = "waiter-rule-" + (skewHours > 0 ? "ahead" : "behind");
        Duration lease = Duration.ofMillis(500);
        Clock skewed = Clock.offset(Clock.systemUTC(), Duration.ofHours(skewHours));
        ManualTicker ticker = new ManualTicker();
        try (DynamoDbLockBackend holder = backend(Ticker.system(), skewed);
             DynamoDbLockBackend waiter = backend(ticker, Clock.systemUTC())) {
            AcquireRequest rh = request(name, lease);
            AttemptResult<Void> held = holder.newAttempt(rh).tryOnce();
            assertTrue(isGranted(held));
            // the holder's skewed wall clock reached the item, for people to read; nothing decides on it
            Instant shown = Instant.parse(item(server, table, name).get("holderTime").s());
            assertTrue(Math.abs(Duration.between(Instant.now().plus(Duration.ofHours(skewHours)), shown).toMinutes()) < 5,
                    "holderTime " + shown);

            AcquireAttempt<Void> attempt = waiter.newAttempt(request(name, lease));
            AttemptResult<Void> r = attempt.tryOnce();
            assertFalse(isGranted(r));
            assertEquals(lease, ((AttemptResult.Busy<Void>) r).retryAfter().orElseThrow(), "the whole lease is left on the waiter's ticker");
            // real time passes, far beyond the lease, but the waiter's ticker stands still: no takeover
            TestTiming.sleep(lease.toMillis() * 2);
            r = attempt.tryOnce();
            assertFalse(isGranted(r), "taken over before the waiter's ticker saw a lease time pass");
            ticker.advance(lease.minusMillis(1));
            r = attempt.tryOnce();
            assertFalse(isGranted(r), "taken over 1 ms before the lease time passed on the waiter's ticker");
            assertEquals(Duration.ofMillis(1), ((AttemptResult.Busy<Void>) r).retryAfter().orElseThrow());
            ticker.advance(Duration.ofMillis(1));
            r = attempt.tryOnce();
            assertTrue(isGranted(r), "not taken over once the record version was unchanged for a lease time");
            assertEquals(token(held) + 1, token(r));
            assertFalse(renewed(holder.renew(List.of(new Grant<Void>(name, rh.ownerId(), token(held), lease, null))))[0],
                    "the old holder's renewal after the takeover");
        }
    }

    @Test
    void aRenewalStartsTheWaitersLeaseTimeOver() throws Exception {
        String name = "renewal-resets";
        Duration lease = Duration.ofMillis(500);
        ManualTicker ticker = new ManualTicker();
        try (DynamoDbLockBackend holder = backend(Ticker.system(), Clock.systemUTC());
             DynamoDbLockBackend waiter = backend(ticker, Clock.systemUTC())) {
            AcquireRequest rh = request(name, lease);
            AttemptResult<Void> held = holder.newAttempt(rh).tryOnce();
            AcquireAttempt<Void> attempt = waiter.newAttempt(request(name, lease));
            assertFalse(isGranted(attempt.tryOnce()));
            ticker.advance(Duration.ofMillis(400));
            assertArrayEquals(new boolean[] {true},
                    renewed(holder.renew(List.of(new Grant<Void>(name, rh.ownerId(), token(held), lease, null)))));
            ticker.advance(Duration.ofMillis(200)); // 600 ms since the first sighting, 200 since the renewal
            AttemptResult<Void> r = attempt.tryOnce();
            assertFalse(isGranted(r), "the renewal wrote a new record version: the waiter starts counting again");
            // the waiter is now first in line, so it polls sooner than the lease time, but takes over no earlier
            assertTrue(((AttemptResult.Busy<Void>) r).retryAfter().orElseThrow().compareTo(lease) <= 0, ((AttemptResult.Busy<Void>) r).retryAfter().toString());
            ticker.advance(lease.minusMillis(1));
            r = attempt.tryOnce();
            assertFalse(isGranted(r), "taken over 1 ms before a lease time since the renewal was seen");
            assertEquals(Duration.ofMillis(1), ((AttemptResult.Busy<Void>) r).retryAfter().orElseThrow());
            ticker.advance(Duration.ofMillis(1));
            assertTrue(isGranted(attempt.tryOnce()));
        }
    }

    @Test
    void repeatedZeroWaitTriesTakeOverACrashedHoldersLock() throws Exception {
        Duration lease = Duration.ofSeconds(1);
        try (LockClient crashed = client(plainUri()); LockClient poller = client(plainUri())) {
            long grantedAt = System.nanoTime();
            crashed.lock("zero-wait", noRenew(lease)).tryAcquire().orElseThrow(); // never renewed nor released
            Optional<Lease> got = Optional.empty();
            // generous: the lease plus 2 s for a loaded machine; each try is a separate attempt, and the
            // client remembers the first sighting of the record version across them
            long deadline = grantedAt + lease.plusSeconds(2).toNanos();
            while (got.isEmpty() && System.nanoTime() - deadline < 0) {
                got = poller.lock("zero-wait").tryAcquire();
                if (got.isEmpty()) {
                    TestTiming.sleep(100);
                }
            }
            long after = System.nanoTime() - grantedAt;
            assertTrue(got.isPresent(), "tryAcquire() every 100 ms never took over the crashed holder's lock");
            assertTrue(after >= lease.toNanos() * 9 / 10, "taken over " + after / 1_000_000 + " ms after the grant");
            got.get().release();
        }
    }

    @Test
    void aCrashedHolderIsTakenOverAfterAboutOneLease() throws Exception {
        Duration lease = Duration.ofSeconds(1);
        String name = "crashed";
        long grantedAt = System.nanoTime();
        DynamoDbLockBackend crashed = backend(Ticker.system(), Clock.systemUTC());
        assertTrue(isGranted(crashed.newAttempt(request(name, lease)).tryOnce()));
        crashed.close(); // gone without a release, like a process that died
        try (LockClient other = client(plainUri())) {
            Lease next = other.lock(name).tryAcquire(lease.multipliedBy(5)).orElseThrow();
            long after = System.nanoTime() - grantedAt;
            assertTrue(after >= lease.toNanos(), "taken over " + after / 1_000_000 + " ms after the grant");
            // generous: the lease, then at most one poll (200 ms cap here) and two round trips; 1 s more for a loaded machine
            assertTrue(after < lease.plusSeconds(1).toNanos(), "taken over only " + after / 1_000_000 + " ms after the grant");
            next.release();
        }
    }

    @Test
    void aThreadWithAPendingInterruptCanStillTakeAFreeLockAndKeepsItsInterrupt() throws Exception {
        try (LockClient a = client(plainUri()); LockClient b = client(plainUri())) {
            Optional<Lease> got;
            Thread.currentThread().interrupt();
            try {
                got = a.lock("pending-interrupt").tryAcquire();
            } finally {
                assertTrue(Thread.interrupted(), "the interrupt flag is kept (and cleared here)");
            }
            assertTrue(got.isPresent(), "a zero-wait try does its request whatever the interrupt flag");
            assertEquals(got.get().ownerId(), b.holder("pending-interrupt").orElseThrow().ownerId());
            got.get().release();
        }
    }

    @Test
    void anInterruptedThreadThatClosesItsLeaseStillFreesTheLock() throws Exception {
        try (LockClient a = client(plainUri()); LockClient b = client(plainUri())) {
            Lease lease = a.lock("interrupted-release").tryAcquire().orElseThrow();
            Thread.currentThread().interrupt();
            try {
                lease.close();
            } finally {
                assertTrue(Thread.interrupted(), "the interrupt flag is kept (and cleared here)");
            }
            assertTrue(b.lock("interrupted-release").tryAcquire().isPresent(), "the release reached DynamoDB");
        }
    }

    @Test
    void theLongestNamesFitTheKeyLimit() throws Exception {
        // 512 UTF-16 characters (the core's limit) of 3-byte UTF-8: 1,536 bytes, under DynamoDB's 2,048
        String euros = "\u20ac".repeat(512);
        String locks = "\uD83D\uDD12".repeat(256); // surrogate pairs: 4 bytes per 2 characters
        try (LockClient a = client(plainUri()); LockClient b = client(plainUri())) {
            for (String name : List.of(euros, locks, euros.substring(1))) {
                Lease lease = a.lock(name).tryAcquire().orElseThrow();
                assertEquals(lease.ownerId(), b.holder(name).orElseThrow().ownerId());
                assertTrue(b.lock(name).tryAcquire().isEmpty());
                lease.release();
            }
        }
    }

    @Test
    void closeLeavesNoThreadBehindButTheJdksKeepAliveTimer() throws Exception {
        Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
        try (LockClient c = client(plainUri() + "&renewal=transaction")) {
            Lease a = c.lock("threads-a").tryAcquire().orElseThrow();
            Lease b = c.lock("threads-b").tryAcquire().orElseThrow();
            assertTrue(c.holder("threads-a").isPresent());
            a.release();
            b.release();
        }
        List<String> alive = new ArrayList<>();
        // generous: pools finish their last task and exit; 5 s covers a loaded machine
        TestTiming.await("the client's threads end", Duration.ofSeconds(5), () -> {
            alive.clear();
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                // the JDK's HttpURLConnection keep-alive cache is one per JVM, with its own timer thread
                if (!before.contains(t) && t.isAlive() && !t.getName().equals("Keep-Alive-Timer")) {
                    alive.add(t.getName());
                }
            }
            return alive.isEmpty();
        });
        assertEquals(List.of(), alive);
    }

    @Test
    void holderNamesTheOwnerAndTokenOfTheCurrentGrant() throws Exception {
        try (LockClient a = client(plainUri()); LockClient b = client(plainUri())) {
            assertEquals(Optional.empty(), b.holder("holder"), "never locked");
            Lease lease = a.lock("holder").tryAcquire().orElseThrow();
            LockHolder h = b.holder("holder").orElseThrow();
            assertEquals(lease.ownerId(), h.ownerId());
            assertEquals(lease.fencingToken(), h.fencingToken());
            assertEquals("holder", h.lockName());
            assertEquals(Optional.empty(), h.remaining(), "DynamoDB keeps no shared time");
            lease.release();
            assertEquals(Optional.empty(), b.holder("holder"), "released");
        }
    }

    @Test
    void transactionRenewalsUnderContentionKeepEveryLeaseAndNeverFailAWaiter() throws Exception {
        // renewed every 500 ms, in one transaction for both leases; generous: a renewal may be a second
        // late on a loaded machine (with 600 ms leases, one CI run lost a lease to a 400 ms stall)
        Duration lease = Duration.ofMillis(1500);
        String uri = plainUri() + "&renewal=transaction";
        try (LockClient holder = client(uri); LockClient waiter = client(uri)) {
            LockOptions options = LockOptions.builder().leaseTime(lease).build();
            Lease a = holder.lock("txn-a", options).tryAcquire().orElseThrow();
            Lease b = holder.lock("txn-b", options).tryAcquire().orElseThrow();
            long until = System.nanoTime() + lease.multipliedBy(3).toNanos();
            int tries = 0;
            while (System.nanoTime() - until < 0) {
                // each try is an optimistic write that may meet a renewal transaction: busy, never an error
                assertTrue(waiter.lock(tries % 2 == 0 ? "txn-a" : "txn-b", options).tryAcquire().isEmpty());
                tries++;
            }
            assertTrue(a.isValid() && b.isValid(), "both leases were renewed throughout (" + tries + " tries)");
            a.release();
            b.release();
            assertTrue(waiter.lock("txn-a").tryAcquire().isPresent());
        }
    }

    @Test
    void theDefaultRenewsFewLeasesOneByOneAndManyByTransaction() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        RequestCounter counter = new RequestCounter();
        try (DynamoDbLockBackend backend = openBackend(plainUri(), Duration.ofSeconds(5), Ticker.system(),
                Clock.systemUTC(), b -> b.addExecutionInterceptor(counter))) {
            List<Grant<Void>> held = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                AcquireRequest r = request("auto-" + i, lease);
                AttemptResult<Void> g = backend.newAttempt(r).tryOnce();
                held.add(new Grant<Void>(r.name(), r.ownerId(), token(g), lease, null));
            }
            counter.reset();
            boolean[] few = renewed(backend.renew(held.subList(0, 99)));
            assertEquals(99, counter.of("UpdateItem"), "below 100 leases: one update each; " + counter);
            assertEquals(0, counter.of("TransactWriteItems"), counter.toString());
            counter.reset();
            boolean[] many = renewed(backend.renew(held));
            assertEquals(1, counter.of("TransactWriteItems"), "100 leases: one transaction; " + counter);
            assertEquals(0, counter.of("UpdateItem"), counter.toString());
            for (int i = 0; i < 100; i++) {
                assertTrue(many[i] && (i == 99 || few[i]), "lease " + i);
            }
        }
    }

    @ParameterizedTest(name = "renewal={0}")
    @ValueSource(strings = {"update", "transaction", "auto"})
    void renewalOfManyLeasesAnswersForEachAndSkipsTheLostOne(String mode) throws Exception {
        int n = 150; // two transactions of 100 and 50 in transaction mode, and in auto mode (150 leases >= 100)
        Duration lease = Duration.ofSeconds(30);
        RequestCounter counter = new RequestCounter();
        String uri = plainUri() + "&renewal=" + mode;
        try (DynamoDbLockBackend backend = openBackend(uri, Duration.ofSeconds(5), Ticker.system(), Clock.systemUTC(),
                b -> b.addExecutionInterceptor(counter));
             DynamoDbLockBackend thief = backend(Ticker.system(), Clock.systemUTC())) {
            List<Grant<Void>> held = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                AcquireRequest r = request("many-" + mode + "-" + i, lease);
                AttemptResult<Void> g = backend.newAttempt(r).tryOnce();
                held.add(new Grant<Void>(r.name(), r.ownerId(), token(g), lease, null));
            }
            // lease 7 lost: another owner took it (release by its owner, then a grant to the thief)
            assertTrue(released(backend.release(held.get(7))));
            assertTrue(isGranted(thief.newAttempt(request(held.get(7).name(), lease)).tryOnce()));
            String rvnBefore = item(server, table, held.get(3).name()).get("rvn").s();

            counter.reset();
            boolean[] renewed = renewed(backend.renew(held));
            for (int i = 0; i < n; i++) {
                assertEquals(i != 7, renewed[i], "lease " + i);
            }
            assertNotEquals(rvnBefore, item(server, table, held.get(3).name()).get("rvn").s(), "renewed: a new version");
            if (mode.equals("update")) {
                assertEquals(n, counter.of("UpdateItem"), counter.toString());
                assertEquals(0, counter.of("TransactWriteItems"), counter.toString());
            } else {
                // the first transaction is cancelled by lease 7: its 99 others are renewed one by one
                assertEquals(2, counter.of("TransactWriteItems"), counter.toString());
                assertEquals(99, counter.of("UpdateItem"), counter.toString());
            }
        }
    }
}
