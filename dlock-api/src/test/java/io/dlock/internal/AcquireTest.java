package io.dlock.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.AcquireOutcome;
import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockConfigurationException;
import io.dlock.spi.AcquireRequest;
import java.time.Duration;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Acquisition on one thread, with fake time: contention, timeouts, failures, interrupts, withLock. */
class AcquireTest {

    private static final Duration LEASE = Duration.ofSeconds(30);

    private final Fixture f = new Fixture();

    @AfterEach
    void close() throws InterruptedException {
        Thread.interrupted(); // never leak an interrupt into the next test
        f.close();
    }

    private DistributedLock lock(String name) {
        return f.client.lock(name, Fixture.options(LEASE, true));
    }

    private void assertNothingHeld(String name) {
        assertEquals(0, f.client.heldCount());
        assertEquals(0, f.client.queue().size(), "local queue slots left behind");
        assertFalse(f.backend.serverOwner(name).filter(o -> !o.startsWith("other-")).isPresent(),
                "this client still holds '" + name + "' on the server");
    }

    @Test
    void aGrantCarriesAFreshOwnerIdTheLeaseTimeAndTheToken() {
        Lease a = lock("a").tryAcquire().orElseThrow();
        a.release();
        Lease b = lock("a").tryAcquire().orElseThrow();

        assertEquals(2, f.backend.requests.size());
        AcquireRequest r = f.backend.requests.get(1);
        assertEquals("a", r.name());
        assertEquals(LEASE, r.leaseTime());
        assertEquals(b.ownerId(), r.ownerId());
        assertTrue(b.ownerId().matches("[0-9a-f]{32}"), b.ownerId());
        assertNotEquals(a.ownerId(), b.ownerId());
        assertTrue(b.fencingToken() > a.fencingToken());
        assertEquals("a", b.lockName());
        assertEquals(AcquireOutcome.ACQUIRED, f.listener.lastOutcome());
    }

    @Test
    void tryAcquireOnABusyLockIsEmptyAndContended() {
        f.backend.grabAsOther("a", LEASE);
        long before = f.ticker.nanoTime();

        assertEquals(Optional.empty(), lock("a").tryAcquire());

        assertEquals(1, f.backend.tryOnceCalls.get());
        assertEquals(0, f.backend.turnCalls.get());
        assertEquals(1, f.backend.abandonCalls.get());
        assertEquals(before, f.ticker.nanoTime(), "no wait");
        assertEquals(AcquireOutcome.CONTENDED, f.listener.lastOutcome());
        assertNothingHeld("a");
    }

    @Test
    void tryAcquireWhileAnotherThreadOfThisClientHoldsItIsContendedWithoutAskingTheServer() {
        Lease held = lock("a").tryAcquire().orElseThrow();
        int calls = f.backend.tryOnceCalls.get();

        assertEquals(Optional.empty(), lock("a").tryAcquire());
        assertEquals(calls, f.backend.tryOnceCalls.get());
        assertEquals(AcquireOutcome.CONTENDED, f.listener.lastOutcome());
        assertEquals(1, f.client.queue().size());
        held.release();
        assertEquals(0, f.client.queue().size());
    }

    @Test
    void tryAcquireWithWaitTimesOutAfterTheDeadlineAndAbandons() throws InterruptedException {
        f.backend.grabAsOther("a", Duration.ofHours(1));
        long start = f.ticker.nanoTime();
        Duration wait = Duration.ofSeconds(2);

        assertEquals(Optional.empty(), lock("a").tryAcquire(wait));

        long waited = f.ticker.nanoTime() - start;
        assertTrue(waited >= wait.toNanos(), "gave up after " + waited + " ns");
        assertTrue(waited <= wait.toNanos() + Duration.ofMillis(1).toNanos(), "overslept: " + waited + " ns");
        assertTrue(f.backend.tryOnceCalls.get() >= 2, "attempts again during the wait");
        assertEquals(1, f.backend.abandonCalls.get());
        assertEquals(AcquireOutcome.TIMED_OUT, f.listener.lastOutcome());
        assertEquals(Duration.ofNanos(waited), f.listener.finished.get(f.listener.finished.size() - 1).waited());
        for (Duration d : f.backend.turnWaits) {
            assertFalse(d.isNegative());
            assertTrue(d.compareTo(Duration.ofMillis(200)) <= 0, "a pause above the retry cap: " + d);
        }
        assertNothingHeld("a");
    }

    @Test
    void aWaiterGetsTheLockWhenTheHolderLetsGo() throws InterruptedException {
        f.backend.grabAsOther("a", Duration.ofHours(1));
        AtomicInteger waits = new AtomicInteger();
        f.backend.onTurn = () -> {
            if (waits.incrementAndGet() == 3) {
                f.backend.forceFree("a");
            }
        };
        Lease lease = lock("a").tryAcquire(Duration.ofMinutes(1)).orElseThrow();
        assertTrue(lease.isValid());
        assertEquals(4, f.backend.tryOnceCalls.get());
        assertEquals(0, f.backend.abandonCalls.get());
        assertEquals(AcquireOutcome.ACQUIRED, f.listener.lastOutcome());
        assertEquals(lease.ownerId(), f.backend.serverOwner("a").orElseThrow());
    }

    @Test
    void aRetryHintShortensThePause() throws InterruptedException {
        f.close();
        Fixture g = new Fixture(b -> b.retry(Duration.ofSeconds(1), Duration.ofSeconds(5)));
        try {
            g.backend.grabAsOther("a", Duration.ofHours(1));
            g.backend.busyHint = Duration.ofMillis(5);
            g.client.lock("a").tryAcquire(Duration.ofSeconds(1));
            assertFalse(g.backend.turnWaits.isEmpty());
            for (Duration d : g.backend.turnWaits) {
                assertTrue(d.compareTo(Duration.ofMillis(6)) <= 0, "ignored the hint: " + d);
            }
        } finally {
            g.close();
        }
    }

    @Test
    void theBackoffGrowsFromTheBaseAndIsBoundedByTheCapAndTheDeadline() throws InterruptedException {
        f.backend.grabAsOther("a", Duration.ofHours(1));
        lock("a").tryAcquire(Duration.ofSeconds(3));
        // base 10 ms, cap 200 ms: the first pause is at most 10 ms, none above 200 ms
        assertTrue(f.backend.turnWaits.get(0).compareTo(Duration.ofMillis(10)) <= 0);
        assertTrue(f.backend.turnWaits.size() > 3);
    }

    @Test
    void aBackendFailurePropagatesAbandonsAndLeavesNothingHeld() {
        LockBackendException failure = new LockBackendException("server unreachable", "a", null);
        f.backend.tryOnceFailure = () -> failure;

        LockBackendException e = assertThrows(LockBackendException.class, () -> lock("a").tryAcquire());
        assertSame(failure, e);
        assertEquals(1, f.backend.abandonCalls.get());
        assertEquals(AcquireOutcome.FAILED, f.listener.lastOutcome());
        assertNothingHeld("a");

        assertThrows(LockBackendException.class, () -> lock("a").tryAcquire(Duration.ofSeconds(1)));
        assertEquals(2, f.backend.abandonCalls.get());
        assertNothingHeld("a");

        f.backend.tryOnceFailure = null;
        assertTrue(lock("a").tryAcquire().isPresent(), "the local slot was given back");
    }

    @Test
    void aConfigurationFailureReachesTheCallerAsItIs() {
        LockConfigurationException failure = new LockConfigurationException(LockConfigurationException.Kind.CREDENTIALS,
                "credentials rejected", "a", null);
        f.backend.tryOnceFailure = () -> failure;
        LockBackendException e = assertThrows(LockBackendException.class, () -> lock("a").tryAcquire(Duration.ofSeconds(5)));
        assertSame(failure, e, "at once, not retried while wait time is left");
        assertFalse(e.retryable());
        assertEquals(1, f.backend.tryOnceCalls.get());
        assertNothingHeld("a");
    }

    @Test
    void aLeaseAboveTheBackendsMaximumIsRejectedWhenEachAcquireStartsAsWhenTheHandleIsMade() {
        f.backend.maximumLeaseTime = Duration.ofSeconds(10);
        IllegalArgumentException atHandle = assertThrows(IllegalArgumentException.class,
                () -> f.client.lock("a", Fixture.options(Duration.ofSeconds(11), true)));
        assertTrue(atHandle.getMessage().contains("leaseTime"), atHandle.getMessage());
        DistributedLock handle = f.client.lock("a", Fixture.options(Duration.ofSeconds(8), true));
        // the backend's bound shrinks after the handle was made (a ZooKeeper session renegotiated shorter)
        f.backend.maximumLeaseTime = Duration.ofSeconds(5);
        for (ThrowingAcquire acquire : new ThrowingAcquire[] {handle::tryAcquire, () -> handle.tryAcquire(Duration.ofSeconds(1)),
                handle::acquire}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, acquire::run);
            assertEquals(atHandle.getMessage().replace("PT11S", "PT8S").replace("PT10S", "PT5S"), e.getMessage());
        }
        ExecutionException async = assertThrows(ExecutionException.class,
                () -> handle.acquireAsync(Duration.ofSeconds(1)).get(5, TimeUnit.SECONDS));
        assertTrue(async.getCause() instanceof IllegalArgumentException, String.valueOf(async.getCause()));
        assertTrue(f.backend.requests.isEmpty(), "nothing was sent");
        assertNothingHeld("a");
        f.backend.maximumLeaseTime = Duration.ofSeconds(8);
        assertTrue(handle.tryAcquire().isPresent(), "the local slot was given back");
    }

    /** An acquire call, for the table above. */
    @FunctionalInterface
    private interface ThrowingAcquire {
        Object run() throws Exception;
    }

    @Test
    void aBackendFailureCausedByAnInterruptIsReportedAsTheInterrupt() {
        // a client library that fails its I/O when the thread is interrupted, as jetcd and gRPC do
        f.backend.tryOnceFailure = () -> {
            Thread.currentThread().interrupt();
            return new LockBackendException("call interrupted", "a", null);
        };
        InterruptedException e = assertThrows(InterruptedException.class, () -> lock("a").tryAcquire(Duration.ofSeconds(1)));
        assertTrue(e.getSuppressed().length == 1 && e.getSuppressed()[0] instanceof LockBackendException,
                "the backend's failure is kept as suppressed");
        assertFalse(Thread.currentThread().isInterrupted(), "the flag was consumed by the exception, as the contract says");
        assertEquals(AcquireOutcome.INTERRUPTED, f.listener.lastOutcome());
        assertEquals(1, f.backend.abandonCalls.get());
        assertNothingHeld("a");

        // the no-wait variant keeps the interrupt for the caller and reports nothing held
        assertTrue(lock("a").tryAcquire().isEmpty());
        assertTrue(Thread.interrupted(), "tryAcquire() restores the caller's interrupt flag");
        f.backend.tryOnceFailure = null;
    }

    @Test
    void aGrantWhoseAnswerWasLostIsUndoneByAbandon() {
        f.backend.grantThenFail = true;
        assertThrows(LockBackendException.class, () -> lock("a").tryAcquire());
        assertEquals(1, f.backend.abandonCalls.get());
        assertEquals(Optional.empty(), f.backend.serverOwner("a"), "the server-side grant stayed");
        assertNothingHeld("a");
    }

    /**
     * The clean-up after a failed try runs on the client's worker: the caller gets its failure at
     * the operation timeout, not after the backend's attempt to undo a grant on a server that is
     * not answering (a quarter of the timeout more, before).
     */
    @Test
    void aFailedTryIsAbandonedInTheBackgroundNotOnTheCallersTime() throws Exception {
        ExecutorService worker = Executors.newCachedThreadPool();
        try (Fixture g = new Fixture(UnaryOperator.identity(), worker)) {
            CountDownLatch cleanUpMayEnd = new CountDownLatch(1);
            AtomicReference<Thread> abandonedOn = new AtomicReference<>();
            g.backend.onAbandon = () -> {
                abandonedOn.set(Thread.currentThread());
                try {
                    // a clean-up request the frozen server does not answer, until the test lets it end
                    cleanUpMayEnd.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            };
            g.backend.grantThenFail = true;

            assertThrows(LockBackendException.class,
                    () -> g.client.lock("a", Fixture.options(LEASE, true)).tryAcquire(Duration.ofSeconds(5)));

            Fixture.waitFor("the abandon started", () -> abandonedOn.get() != null);
            assertNotSame(Thread.currentThread(), abandonedOn.get(), "abandon() ran on the caller's thread");
            assertEquals(0, g.backend.abandonCalls.get(), "the failure reached the caller while the clean-up was "
                    + "still under way");
            assertEquals(AcquireOutcome.FAILED, g.listener.lastOutcome());
            cleanUpMayEnd.countDown();
            Fixture.waitFor("the grant whose answer was lost is undone", () -> g.backend.serverOwner("a").isEmpty());
            assertEquals(1, g.backend.abandonCalls.get());
            g.backend.grantThenFail = false;
            g.client.lock("a", Fixture.options(LEASE, true)).tryAcquire().orElseThrow().release();
        }
    }

    @Test
    void anInterruptedWaiterThrowsAbandonsAndHoldsNothing() {
        f.backend.grabAsOther("a", Duration.ofHours(1));
        f.backend.onTurn = () -> Thread.currentThread().interrupt();

        assertThrows(InterruptedException.class, () -> lock("a").tryAcquire(Duration.ofMinutes(1)));

        assertFalse(Thread.currentThread().isInterrupted(),
                "the InterruptedException carries the interrupt; the flag is not also left set");
        assertEquals(1, f.backend.abandonCalls.get());
        assertEquals(AcquireOutcome.INTERRUPTED, f.listener.lastOutcome());
        assertNothingHeld("a");
        f.backend.onTurn = null;
        f.backend.forceFree("a");
        assertTrue(lock("a").tryAcquire().isPresent());
    }

    @Test
    void anInterruptedAcquireForeverThrows() {
        f.backend.grabAsOther("a", Duration.ofHours(1));
        f.backend.onTurn = () -> Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> lock("a").acquire());
        assertEquals(1, f.backend.abandonCalls.get());
        assertNothingHeld("a");
    }

    @Test
    void tryAcquireWithoutWaitKeepsThePendingInterruptForTheCaller() {
        Thread.currentThread().interrupt();
        Optional<Lease> lease = lock("a").tryAcquire();
        assertTrue(Thread.interrupted(), "the caller's interrupt was swallowed");
        assertTrue(lease.isPresent(), "a zero wait does not block, so an interrupt does not stop it");
    }

    @Test
    void acquireWaitsAsLongAsItTakes() throws InterruptedException {
        f.backend.grabAsOther("a", Duration.ofMinutes(10)); // expires on the server after 10 minutes
        long start = f.ticker.nanoTime();
        Lease lease = lock("a").acquire();
        assertTrue(f.ticker.nanoTime() - start >= Duration.ofMinutes(10).toNanos());
        assertTrue(lease.isValid());
    }

    @Test
    void negativeOrNullWaitsAreRejected() {
        DistributedLock lock = lock("a");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> lock.tryAcquire(Duration.ofMillis(-1)));
        assertTrue(e.getMessage().contains("maxWait") && e.getMessage().contains("-0.001"), e.getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> lock.tryAcquire(null))
                .getMessage().contains("maxWait"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> lock.acquireAsync(Duration.ofSeconds(-1)))
                .getMessage().contains("maxWait"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> lock.withLock(Duration.ofSeconds(-1), l -> { }))
                .getMessage().contains("maxWait"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> lock.withLock(Duration.ZERO, null))
                .getMessage().contains("action"));
        assertEquals(0, f.backend.tryOnceCalls.get());
    }

    @Test
    void withLockRunsTheActionAndReleases() throws InterruptedException {
        AtomicReference<Lease> seen = new AtomicReference<>();
        assertTrue(lock("a").withLock(Duration.ZERO, l -> {
            assertTrue(l.isValid());
            seen.set(l);
        }));
        assertFalse(seen.get().isValid());
        assertEquals(1, f.backend.releaseCalls.get());
        assertNothingHeld("a");
    }

    @Test
    void withLockReleasesWhenTheActionThrows() {
        IllegalStateException boom = new IllegalStateException("boom");
        AtomicReference<Lease> seen = new AtomicReference<>();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> lock("a").withLock(Duration.ZERO, l -> {
                    seen.set(l);
                    throw boom;
                }));
        assertSame(boom, e);
        assertFalse(seen.get().isValid());
        assertEquals(1, f.backend.releaseCalls.get());
        assertNothingHeld("a");
    }

    @Test
    void withLockOnABusyLockDoesNotRunTheAction() throws InterruptedException {
        f.backend.grabAsOther("a", Duration.ofHours(1));
        AtomicInteger ran = new AtomicInteger();
        assertFalse(lock("a").withLock(Duration.ofSeconds(1), l -> ran.incrementAndGet()));
        assertEquals(0, ran.get());
        assertNothingHeld("a");
    }

    @Test
    void acquireAsyncCompletesWithTheLeaseEmptyOrTheFailure() throws Exception {
        CompletableFuture<Optional<Lease>> granted = lock("a").acquireAsync(Duration.ofSeconds(1));
        Lease lease = granted.get(10, TimeUnit.SECONDS).orElseThrow();
        assertTrue(lease.isValid());

        f.backend.grabAsOther("b", Duration.ofHours(1));
        assertEquals(Optional.empty(), lock("b").acquireAsync(Duration.ofSeconds(1)).get(10, TimeUnit.SECONDS));
        assertEquals(AcquireOutcome.TIMED_OUT, f.listener.lastOutcome());

        f.backend.tryOnceFailure = () -> new LockBackendException("down", "c", null);
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> lock("c").acquireAsync(Duration.ZERO).get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof LockBackendException);
        lease.release();
        assertEquals(0, f.client.queue().size());
    }

    @Test
    void theLocalQueueMapIsEmptyAgainAfterAllLeasesEnd() throws InterruptedException {
        Set<Lease> leases = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            leases.add(lock("name-" + i).tryAcquire().orElseThrow());
        }
        assertEquals(1000, f.client.queue().size());
        f.backend.grabAsOther("busy", Duration.ofHours(1));
        lock("busy").tryAcquire();
        lock("busy").tryAcquire(Duration.ofMillis(50));
        f.backend.tryOnceFailure = () -> new LockBackendException("down", null, null);
        assertThrows(LockBackendException.class, () -> lock("failing").tryAcquire());
        f.backend.tryOnceFailure = null;
        int i = 0;
        for (Lease l : leases) {
            if (i++ % 2 == 0) {
                l.release();
            }
        }
        f.scheduler.advance(Duration.ofSeconds(10));
        f.backend.renewNotOwner = n -> true; // the rest are lost as superseded at their next renewal
        f.scheduler.advance(Duration.ofSeconds(10));
        assertEquals(0, f.client.heldCount());
        assertEquals(0, f.client.queue().size());
        assertEquals(0, f.client.renewer().size());
    }

    @Test
    void aLockOnAClosedClientFails() {
        DistributedLock lock = lock("a");
        f.client.close();
        assertThrows(IllegalStateException.class, lock::tryAcquire);
        assertThrows(IllegalStateException.class, () -> lock.tryAcquire(Duration.ofSeconds(1)));
        assertThrows(IllegalStateException.class, () -> lock.acquireAsync(Duration.ofSeconds(1)));
        assertThrows(IllegalStateException.class, () -> f.client.lock("b"));
        assertEquals(0, f.backend.tryOnceCalls.get());
    }
}
