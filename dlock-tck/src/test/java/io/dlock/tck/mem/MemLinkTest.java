package io.dlock.tck.mem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockHolder;
import io.dlock.Lease;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.Grant;
import io.dlock.tck.FreezableClient;
import io.dlock.tck.NetworkFault;
import io.dlock.tck.TestTiming;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The {@link NetworkFault} kinds of the reference provider's emulated network, at the level of
 * requests: whether a request is applied on the {@link MemServer}, and whether and when its caller
 * hears back.
 */
class MemLinkTest {

    /** The operation timeout of the link under test: long enough that "at once" is clearly shorter. */
    private static final Duration TIMEOUT = Duration.ofMillis(1500);
    /** "At once": well below the timeout, generous for a loaded machine. */
    private static final Duration PROMPTLY = Duration.ofMillis(1000);

    private final String serverName = "memlink-test-" + UUID.randomUUID();
    private MemServer server;
    private MemLockProvider.MemBackend backend;
    private MemLink link;

    @BeforeEach
    void open() {
        server = MemServer.named(serverName);
        backend = new MemLockProvider.MemBackend(server, "link-1", TIMEOUT);
        link = backend.link;
    }

    @AfterEach
    void close() {
        link.heal();
        backend.close();
        MemServer.drop(serverName);
    }

    private AttemptResult<Void> tryOnce(String name, String owner, Duration lease) {
        AcquireAttempt<Void> a = backend.newAttempt(new AcquireRequest(name, owner, lease));
        return a.tryOnce();
    }

    /** Runs a call on another thread, as a client's caller would. */
    private static <T> CompletableFuture<T> async(java.util.function.Supplier<T> call) {
        CompletableFuture<T> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                f.complete(call.get());
            } catch (RuntimeException e) {
                f.completeExceptionally(e);
            }
        }, "test-caller");
        t.setDaemon(true);
        t.start();
        return f;
    }

    private static Throwable failureOf(CompletableFuture<?> f, Duration within) throws Exception {
        try {
            Object r = f.get(within.toMillis(), TimeUnit.MILLISECONDS);
            throw new AssertionError("expected a failure, got " + r);
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    private static void assertTimedOut(Runnable call, String what) {
        long start = System.nanoTime();
        LockBackendException e = assertThrows(LockBackendException.class, call::run, what);
        long took = System.nanoTime() - start;
        // the caller waits for its answer the whole operation timeout (a timed wait never ends early)
        assertTrue(took >= TIMEOUT.toNanos(), what + ": failed after " + took / 1_000_000 + " ms, before the timeout");
        assertTrue(e.getMessage().contains("no answer within the operation timeout"), e.getMessage());
    }

    private static void assertReset(Throwable t, String what) {
        assertTrue(t instanceof LockBackendException, what + ": " + t);
        assertTrue(t.getMessage().contains("connection reset"), what + ": " + t.getMessage());
    }

    @Test
    void dropAnswersAppliesGrantRenewalAndReleaseWhileTheCallerTimesOut() {
        link.inject(NetworkFault.DROP_ANSWERS);
        assertTimedOut(() -> tryOnce("a", "owner-a", Duration.ofSeconds(2)), "an acquire under DROP_ANSWERS");
        Optional<LockHolder> holder = server.holder("a");
        assertTrue(holder.isPresent(), "the grant took effect on the server");
        assertEquals("owner-a", holder.get().ownerId());
        Grant<Void> held = new Grant<>("a", "owner-a", holder.get().fencingToken(), Duration.ofSeconds(60), null);

        assertTimedOut(() -> backend.renew(List.of(held)), "a renewal under DROP_ANSWERS");
        // only the renewal, with its 60 s lease, explains more than the 2 s the grant had
        assertTrue(server.holder("a").orElseThrow().remaining().orElseThrow().compareTo(Duration.ofSeconds(30)) > 0,
                "the renewal took effect on the server: " + server.holder("a"));

        assertTimedOut(() -> backend.release(held), "a release under DROP_ANSWERS");
        assertFalse(server.holder("a").isPresent(), "the release took effect on the server");

        link.heal();
        assertTrue(tryOnce("a", "owner-b", Duration.ofSeconds(2)) instanceof AttemptResult.Granted, "after heal, answers come back");
    }

    @Test
    void dropAnswersThroughTheFixturesClientLeavesNothingHeldBecauseTheCleanUpIsAppliedToo() throws Exception {
        try (MemFixture fixture = new MemFixture()) {
            FreezableClient c = fixture.openFreezable(fixture.clientConfig().operationTimeout(Duration.ofMillis(300)))
                    .orElseThrow();
            try {
                assertEquals(EnumSet.allOf(NetworkFault.class), c.faults());
                LockClient client = c.client();
                c.inject(NetworkFault.DROP_ANSWERS);
                assertThrows(LockBackendException.class, () -> client.lock("x").tryAcquire(),
                        "an acquire whose answer is lost cannot tell it was granted");
                // the core abandons the unknown attempt in the background: its owner-checked release is a
                // request, so it is applied; a grant within 200 ms (a third of the 600 ms lease) only it explains
                LockClient other = LockClient.open(fixture.clientConfig().build());
                try {
                    Optional<Lease> l = other.lock("x").tryAcquire(Duration.ofMillis(200));
                    assertTrue(l.isPresent(), "the grant whose answer was lost was undone by the clean-up");
                    l.get().release();
                } finally {
                    other.close();
                }
                c.heal();
                Lease again = client.lock("x").tryAcquire().orElseThrow();
                again.release();
            } finally {
                c.close();
            }
        }
    }

    @Test
    void aCallerWaitingForALostAnswerFailsAtOnceOnHeal() throws Exception {
        link.inject(NetworkFault.DROP_ANSWERS);
        CompletableFuture<AttemptResult<Void>> f = async(() -> tryOnce("h", "owner-a", Duration.ofSeconds(5)));
        TestTiming.await("the request reached the server", Duration.ofSeconds(5), () -> server.holder("h").isPresent());
        long start = System.nanoTime();
        link.heal();
        assertReset(failureOf(f, PROMPTLY), "a caller whose answer was lost, on heal");
        assertTrue(System.nanoTime() - start < PROMPTLY.toNanos());
    }

    @Test
    void dropAndDropRequestsApplyNothingAndDeliverNothingOnHeal() throws Exception {
        for (NetworkFault kind : List.of(NetworkFault.DROP, NetworkFault.DROP_REQUESTS)) {
            String name = "d-" + kind;
            link.inject(kind);
            assertTimedOut(() -> tryOnce(name, "owner-a", Duration.ofSeconds(5)), "an acquire under " + kind);
            assertFalse(server.holder(name).isPresent(), kind + ": the request was not applied");
            CompletableFuture<AttemptResult<Void>> waiting = async(() -> tryOnce(name, "owner-a", Duration.ofSeconds(5)));
            TestTiming.await("a caller waits", Duration.ofSeconds(5), () -> link.underWay() == 1);
            link.heal();
            assertReset(failureOf(waiting, PROMPTLY), kind + ": a caller waiting on heal");
            TestTiming.sleep(200); // nothing is delivered late
            assertFalse(server.holder(name).isPresent(), kind + ": a lost request was delivered after heal");
            assertTrue(tryOnce(name, "owner-b", Duration.ofSeconds(5)) instanceof AttemptResult.Granted, kind + ": after heal the link works");
        }
    }

    @Test
    void resetFailsCallsInFlightAtOnceAndNewCallsWork() throws Exception {
        link.inject(NetworkFault.LATENCY);
        CompletableFuture<Optional<LockHolder>> inFlight = async(() -> backend.holder("r"));
        TestTiming.await("a request is under way", Duration.ofSeconds(5), () -> link.underWay() == 1);
        long start = System.nanoTime();
        link.inject(NetworkFault.RESET);
        assertReset(failureOf(inFlight, PROMPTLY), "a call in flight when the connection is reset");
        assertTrue(System.nanoTime() - start < PROMPTLY.toNanos());
        assertEquals(0, link.underWay());
        assertTrue(tryOnce("r", "owner-a", Duration.ofSeconds(5)) instanceof AttemptResult.Granted, "a new call after RESET works");
    }

    @Test
    void latencyDelaysRequestAndAnswerAndKeepsOrder() throws Exception {
        link.latencySeed(1);
        link.inject(NetworkFault.LATENCY);
        long start = System.nanoTime();
        assertTrue(tryOnce("l", "owner-a", Duration.ofSeconds(5)) instanceof AttemptResult.Granted);
        long took = System.nanoTime() - start;
        assertTrue(took >= 2 * NetworkFault.MIN_LATENCY.toNanos(), "a call under LATENCY took " + took / 1_000_000 + " ms");
        // two delays of at most 500 ms each, below the 1.5 s timeout, or the caller would have failed

        // ten requests under way at once, each with its own delay: applied in the order they were sent
        List<Integer> applied = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Integer>> answers = new ArrayList<>();
        long before = link.sent();
        for (int i = 0; i < 10; i++) {
            int n = i;
            answers.add(async(() -> link.call("l", () -> {
                applied.add(n);
                return n;
            })));
            // the next request is sent only once this one is on its way
            TestTiming.await("request " + i + " was sent", Duration.ofSeconds(5), () -> link.sent() == before + n + 1);
        }
        for (int i = 0; i < 10; i++) {
            assertEquals(i, answers.get(i).get(5, TimeUnit.SECONDS), "each caller gets its own answer");
        }
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), applied, "requests were applied out of order");
        link.heal();
        TestTiming.await("the courier thread ends once nothing is delayed", Duration.ofSeconds(5),
                () -> !link.courierRunning());
        assertEquals(0, link.underWay());
    }

    @Test
    void blackHoleFailsCallsInFlightAtOnceThenLosesNewRequests() throws Exception {
        link.inject(NetworkFault.DROP_ANSWERS);
        CompletableFuture<AttemptResult<Void>> inFlight = async(() -> tryOnce("b", "owner-a", Duration.ofSeconds(5)));
        TestTiming.await("a caller waits", Duration.ofSeconds(5), () -> link.underWay() == 1);
        link.inject(NetworkFault.BLACK_HOLE);
        assertReset(failureOf(inFlight, PROMPTLY), "a call in flight when the black hole starts");
        assertTimedOut(() -> tryOnce("b2", "owner-a", Duration.ofSeconds(5)), "an acquire into a black hole");
        assertFalse(server.holder("b2").isPresent(), "a black hole applies nothing");
        assertFalse(link.hearsServer(), "no news from the server through a black hole");
        link.heal();
        assertTrue(link.hearsServer());
        assertTrue(tryOnce("b2", "owner-a", Duration.ofSeconds(5)) instanceof AttemptResult.Granted, "after heal the link works");
    }

    @Test
    void freezeThroughInjectHoldsRequestsAndHealDeliversThemLate() throws Exception {
        link.inject(NetworkFault.FREEZE);
        assertTrue(link.isFrozen());
        assertTimedOut(() -> tryOnce("f", "owner-a", Duration.ofSeconds(5)), "an acquire while frozen");
        assertFalse(server.holder("f").isPresent(), "held, not yet delivered");
        link.heal();
        assertEquals("owner-a", server.holder("f").orElseThrow().ownerId(), "delivered late on heal");
    }

    @Test
    void rejectsANullFault() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> link.inject(null));
        assertTrue(e.getMessage().contains("kind"), e.getMessage());
    }
}
