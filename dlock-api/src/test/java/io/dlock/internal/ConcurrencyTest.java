package io.dlock.internal;

import static io.dlock.internal.Fixture.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.AcquireOutcome;
import io.dlock.DistributedLock;
import io.dlock.Lease;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Several threads of one client; asynchronous acquisition and its cancellation. */
class ConcurrencyTest {

    private static final Duration LEASE = Duration.ofSeconds(30);

    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final Fixture f = new Fixture(UnaryOperator.identity(), Executors.newCachedThreadPool());

    @AfterEach
    void close() throws InterruptedException {
        f.close();
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    private DistributedLock lock(String name) {
        return f.client.lock(name, Fixture.options(LEASE, true));
    }

    /** @return how many of this client's acquisitions wait in the local queue of the name */
    private int queued(String name) {
        return f.client.queue().waiting(name);
    }

    @Test
    void threadsOfOneClientAreServedInArrivalOrder() throws Exception {
        DistributedLock lock = lock("a");
        Lease first = lock.tryAcquire().orElseThrow();
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        List<Future<?>> done = new ArrayList<>();
        // The local wait runs in real time, so the arrivals are spaced in real time: 0, ~60 and
        // ~120 ms. A waiter that left and re-joined the queue every so often (to check for close)
        // would be overtaken by a later arrival; these spacings make that show.
        long[] arriveAt = {0, 60, 120};
        long t0 = System.nanoTime();
        for (int i = 0; i < arriveAt.length; i++) {
            long wait = TimeUnit.MILLISECONDS.toNanos(arriveAt[i]) - (System.nanoTime() - t0);
            if (wait > 0) {
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            }
            int id = i;
            done.add(pool.submit(() -> {
                Lease l = lock.acquire();
                order.add(id);
                l.release();
                return null;
            }));
            int queued = i + 1;
            waitFor("waiter " + i + " queued", () -> queued("a") >= queued);
        }
        Thread.sleep(40);
        first.release();
        for (Future<?> d : done) {
            d.get(10, TimeUnit.SECONDS);
        }
        assertEquals(List.of(0, 1, 2), order);
        assertEquals(0, f.client.queue().size());
    }

    @Test
    void manyWaitersAreServedInArrivalOrder() throws Exception {
        DistributedLock lock = lock("a");
        Lease first = lock.tryAcquire().orElseThrow();
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        List<Future<?>> done = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            int id = i;
            done.add(pool.submit(() -> {
                Optional<Lease> l = lock.tryAcquire(Duration.ofHours(1));
                order.add(id);
                l.orElseThrow().release();
                return null;
            }));
            int queued = i + 1;
            waitFor("waiter " + i + " queued", () -> queued("a") >= queued);
        }
        first.release();
        for (Future<?> d : done) {
            d.get(10, TimeUnit.SECONDS);
        }
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), order);
    }

    @Test
    void onlyOneThreadPerNameTalksToTheBackendAndThreadsExcludeEachOther() throws Exception {
        f.backend.awaitMode = FakeBackend.AwaitMode.REAL;
        DistributedLock lock = lock("a");
        AtomicInteger holding = new AtomicInteger();
        AtomicInteger maxHolding = new AtomicInteger();
        AtomicInteger acquired = new AtomicInteger();
        CountDownLatch stop = new CountDownLatch(1);
        // another client grabs the lock whenever it is free, for a moment
        Future<?> competitor = pool.submit(() -> {
            while (stop.getCount() > 0) {
                if (f.backend.grabAsOther("a", Duration.ofHours(1)) > 0) {
                    Thread.yield();
                    f.backend.releaseOther("a");
                }
                Thread.yield();
            }
            return null;
        });
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < 6; t++) {
            workers.add(pool.submit(() -> {
                for (int i = 0; i < 30; i++) {
                    Lease l = lock.tryAcquire(Duration.ofHours(1)).orElseThrow();
                    int now = holding.incrementAndGet();
                    maxHolding.accumulateAndGet(now, Math::max);
                    Thread.yield();
                    holding.decrementAndGet();
                    acquired.incrementAndGet();
                    l.release();
                }
                return null;
            }));
        }
        try {
            for (Future<?> w : workers) {
                w.get(60, TimeUnit.SECONDS);
            }
        } finally {
            stop.countDown();
            competitor.get(10, TimeUnit.SECONDS);
        }
        assertEquals(180, acquired.get());
        assertEquals(1, maxHolding.get(), "two threads of one client held the lock at once");
        assertEquals(1, f.backend.maxInFlightPerName.get(), "two threads of one client talked to the server at once");
        assertEquals(0, f.client.queue().size());
        assertEquals(0, f.client.heldCount());
    }

    @Test
    void cancellingAnAsyncAcquireStopsTheWaitAndLeavesNothingHeld() throws Exception {
        f.backend.awaitMode = FakeBackend.AwaitMode.REAL;
        f.backend.grabAsOther("a", Duration.ofHours(1));
        CompletableFuture<Optional<Lease>> future = lock("a").acquireAsync(Duration.ofHours(1));
        waitFor("waiting on the server", () -> f.backend.turnCalls.get() > 0);

        assertTrue(future.cancel(true));

        waitFor("abandoned", () -> f.backend.abandonCalls.get() == 1);
        waitFor("local slot freed", () -> f.client.queue().size() == 0);
        waitFor("outcome reported", () -> f.listener.lastOutcome() != null);
        assertEquals(AcquireOutcome.CANCELLED, f.listener.lastOutcome());
        int calls = f.backend.tryOnceCalls.get();
        f.backend.releaseOther("a");
        assertTrue(lock("a").tryAcquire().isPresent());
        assertEquals(calls + 1, f.backend.tryOnceCalls.get(), "the cancelled waiter kept trying");
    }

    @Test
    void aGrantArrivingAfterCancellationIsReleased() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        f.backend.tryOnceGate = gate;
        f.backend.interruptSensitive = true; // like a client whose I/O fails on an interrupted thread
        CompletableFuture<Optional<Lease>> future = lock("a").acquireAsync(Duration.ofHours(1));
        assertTrue(f.backend.tryOnceEntered.await(10, TimeUnit.SECONDS));

        assertTrue(future.cancel(true));
        gate.countDown(); // the server grants, after the caller gave up

        waitFor("the late grant is released", () -> f.backend.releaseCalls.get() == 1);
        waitFor("local slot freed", () -> f.client.queue().size() == 0);
        assertTrue(future.isCancelled());
        assertEquals(0, f.client.heldCount());
        assertEquals(Optional.empty(), f.backend.serverOwner("a"), "the late grant was left held on the server");
    }

    @Test
    void aGrantArrivingAfterCancellationIsReleasedByAnUninterruptibleBackendToo() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        f.backend.tryOnceGate = gate;
        CompletableFuture<Optional<Lease>> future = lock("a").acquireAsync(Duration.ofHours(1));
        assertTrue(f.backend.tryOnceEntered.await(10, TimeUnit.SECONDS));

        assertTrue(future.cancel(true));
        assertTrue(future.isCancelled());
        gate.countDown();

        waitFor("the late grant is released", () -> f.backend.releaseCalls.get() == 1);
        waitFor("local slot freed", () -> f.client.queue().size() == 0);
        assertEquals(1, f.backend.releasesThatFreed.get());
        assertEquals(Optional.empty(), f.backend.serverOwner("a"));
        assertTrue(lock("a").tryAcquire().isPresent(), "the lock is free for the next caller");
    }

    @Test
    void aGrantWhoseAnswerIsLostAfterCancellationIsAbandoned() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        f.backend.tryOnceGate = gate;
        f.backend.interruptSensitive = true;
        f.backend.grantThenFail = true;
        CompletableFuture<Optional<Lease>> future = lock("a").acquireAsync(Duration.ofHours(1));
        assertTrue(f.backend.tryOnceEntered.await(10, TimeUnit.SECONDS));

        assertTrue(future.cancel(true));
        gate.countDown(); // the server grants, but the answer is lost

        waitFor("abandoned", () -> f.backend.abandonCalls.get() == 1);
        waitFor("local slot freed", () -> f.client.queue().size() == 0);
        assertEquals(Optional.empty(), f.backend.serverOwner("a"), "abandon() could not undo the grant");
    }

    @Test
    void aSecondThreadWaitsForTheFirstThreadsLease() throws Exception {
        DistributedLock lock = lock("a");
        Lease first = lock.tryAcquire().orElseThrow();
        CompletableFuture<Optional<Lease>> second = lock.acquireAsync(Duration.ofHours(1));
        waitFor("second queued", () -> queued("a") == 1);
        assertFalse(second.isDone());
        assertEquals(1, f.backend.tryOnceCalls.get(), "the second thread must not ask the server yet");
        first.release();
        Lease l = second.get(10, TimeUnit.SECONDS).orElseThrow();
        assertTrue(l.fencingToken() > first.fencingToken());
        l.release();
    }
}
