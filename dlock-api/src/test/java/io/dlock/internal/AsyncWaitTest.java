package io.dlock.internal;

import static io.dlock.internal.Fixture.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.AcquireOutcome;
import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import io.dlock.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Waiting holds no thread: thousands of pending asynchronous acquisitions on a real client (its own
 * pools, a real clock) add only the client's bounded threads, are served in arrival order, and
 * cancelled ones leave nothing behind; blocking and asynchronous callers share one queue; a waiter
 * that gives up as the slot reaches it passes it on.
 */
class AsyncWaitTest {

    private static final LockOptions OPTIONS = LockOptions.builder().leaseTime(Duration.ofMinutes(1)).build();

    /**
     * The most threads a client may add: its timer, its worker pool and its listener threads
     * ({@link DefaultLockClient#WORKER_THREADS} + {@link DefaultLockClient#EVENT_THREADS} + 1);
     * the fake backend starts none.
     */
    private static final int CLIENT_THREADS = DefaultLockClient.WORKER_THREADS + DefaultLockClient.EVENT_THREADS + 1;

    private final FakeBackend backend = new FakeBackend(Ticker.system());
    private final RecordingListener listener = new RecordingListener();
    private final ExecutorService callers = Executors.newCachedThreadPool();
    private LockClient client;

    private DefaultLockClient open() {
        client = LockClient.open(LockClientConfig.builder("fake://async").listener(listener)
                .retry(Duration.ofMillis(5), Duration.ofMillis(100)).build(), FakeProvider.of(backend));
        return (DefaultLockClient) client;
    }

    @AfterEach
    void close() throws InterruptedException {
        if (client != null) {
            client.close();
        }
        callers.shutdownNow();
        assertTrue(callers.awaitTermination(10, TimeUnit.SECONDS));
    }

    private static Set<Thread> threads() {
        return new HashSet<>(Thread.getAllStackTraces().keySet());
    }

    private static List<String> newThreads(Set<Thread> before) {
        List<String> added = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (!before.contains(t) && t.isAlive()) {
                added.add(t.getName());
            }
        }
        return added;
    }

    @Test
    void twoThousandPendingAsyncAcquiresHoldNoThreadsAreServedInOrderAndCancelledOnesLeaveNothing() throws Exception {
        Set<Thread> before = threads();
        DefaultLockClient core = open();
        backend.grabAsOther("a", Duration.ofHours(1));
        DistributedLock lock = client.lock("a", OPTIONS);
        int n = 2000;
        List<CompletableFuture<Optional<Lease>>> futures = new ArrayList<>();
        List<CompletableFuture<Void>> served = new ArrayList<>();
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < n; i++) {
            int index = i;
            CompletableFuture<Optional<Lease>> f = lock.acquireAsync(Duration.ofHours(1));
            futures.add(f);
            served.add(f.thenAccept(l -> {
                order.add(index);
                l.orElseThrow().release(); // the next one's turn
            }));
        }
        // the first waits on the server (its turn, between tries), the others in the local queue
        waitFor("a waiter on the server", () -> backend.turnCalls.get() > 0);
        waitFor("the others queued locally", () -> core.queue().waiting("a") == n - 1);
        List<String> added = newThreads(before);
        System.out.println("[async] " + n + " pending acquireAsync calls on one lock: " + added.size()
                + " threads more than before the client opened " + added);
        // on a thread per pending acquire this was more than 2,000
        assertTrue(added.size() <= CLIENT_THREADS, added.size() + " threads for " + n + " pending acquires: " + added);
        assertEquals(n, core.acquisitionCount());

        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (i % 2 == 1) {
                assertTrue(futures.get(i).cancel(true), "waiter " + i + " was still pending");
            } else {
                expected.add(i);
            }
        }
        waitFor("the cancelled waiters left the queue", () -> core.queue().waiting("a") == n / 2 - 1);
        backend.releaseOther("a");
        for (int i : expected) {
            served.get(i).get(30, TimeUnit.SECONDS);
        }
        assertEquals(expected, order, "served in arrival order");
        waitFor("every acquisition ended", () -> core.acquisitionCount() == 0);
        assertEquals(0, core.heldCount());
        assertEquals(0, core.queue().size(), "local queue slots left behind");
        assertEquals(0, backend.serverHeldCount(), "a lock left held on the server");
        assertEquals(1, backend.maxInFlightPerName.get(), "two calls at once for one name from one client");
        waitFor("every outcome reported", () -> listener.finished.size() == n);
        long cancelled = listener.finished.stream().filter(e -> e.outcome() == AcquireOutcome.CANCELLED).count();
        long acquired = listener.finished.stream().filter(e -> e.outcome() == AcquireOutcome.ACQUIRED).count();
        assertEquals(n / 2, cancelled);
        assertEquals(n / 2, acquired);
        assertTrue(lock.tryAcquire().isPresent(), "the lock is free for the next caller");
    }

    @Test
    void blockingAndAsyncWaitersShareOneArrivalOrder() throws Exception {
        DefaultLockClient core = open();
        DistributedLock lock = client.lock("a", OPTIONS);
        Lease first = lock.tryAcquire().orElseThrow();
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        List<Future<?>> done = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            int id = i;
            if (i % 2 == 0) {
                done.add(callers.submit(() -> {
                    Lease l = lock.acquire();
                    order.add(id);
                    l.release();
                    return null;
                }));
            } else {
                done.add(lock.acquireAsync(Duration.ofHours(1)).thenAccept(l -> {
                    order.add(id);
                    l.orElseThrow().release();
                }));
            }
            int queued = i + 1;
            waitFor("waiter " + i + " queued", () -> core.queue().waiting("a") == queued);
        }
        first.release();
        for (Future<?> d : done) {
            d.get(10, TimeUnit.SECONDS);
        }
        assertEquals(List.of(0, 1, 2, 3, 4, 5), order);
        assertEquals(0, core.queue().size());
    }

    @Test
    void anInterruptedLocalWaiterLeavesTheQueueAndTheNextOneIsServed() throws Exception {
        DefaultLockClient core = open();
        DistributedLock lock = client.lock("a", OPTIONS);
        Lease first = lock.tryAcquire().orElseThrow();
        CountDownLatch interrupted = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            try {
                lock.acquire();
            } catch (InterruptedException e) {
                if (!Thread.currentThread().isInterrupted()) {
                    interrupted.countDown(); // the flag went with the exception, as the contract says
                }
            }
        });
        waiter.start();
        waitFor("queued", () -> core.queue().waiting("a") == 1);
        CompletableFuture<Optional<Lease>> next = lock.acquireAsync(Duration.ofHours(1));
        waitFor("both queued", () -> core.queue().waiting("a") == 2);
        waiter.interrupt();
        assertTrue(interrupted.await(10, TimeUnit.SECONDS), "acquire() did not throw InterruptedException");
        waitFor("the interrupted waiter left", () -> core.queue().waiting("a") == 1);
        assertEquals(AcquireOutcome.INTERRUPTED, listener.lastOutcome());
        first.release();
        next.get(10, TimeUnit.SECONDS).orElseThrow().release();
        assertEquals(0, core.queue().size());
    }

    @Test
    void aLocalWaitTimesOutOnTheClientsTimerAndAZeroWaitDoesNotQueue() throws Exception {
        DefaultLockClient core = open();
        DistributedLock lock = client.lock("a", OPTIONS);
        Lease first = lock.tryAcquire().orElseThrow();
        long t0 = System.nanoTime();
        assertEquals(Optional.empty(), lock.acquireAsync(Duration.ofMillis(200)).get(10, TimeUnit.SECONDS));
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(200), "gave up early");
        assertEquals(AcquireOutcome.TIMED_OUT, listener.lastOutcome());
        assertEquals(Optional.empty(), lock.acquireAsync(Duration.ZERO).get(10, TimeUnit.SECONDS));
        assertEquals(AcquireOutcome.CONTENDED, listener.lastOutcome());
        assertEquals(0, core.queue().waiting("a"));
        first.release();
        assertEquals(0, core.queue().size());
        assertEquals(1, backend.tryOnceCalls.get(), "the local waiters never asked the server");
    }

    /**
     * Many callers of one client race for one lock with short waits, cancels and interrupts, so
     * that some give up just as the slot reaches them: no two ever hold it at once, and at the end
     * no slot is lost (the lock is free, the queue empty).
     */
    @Test
    void waitersGivingUpAsTheSlotReachesThemNeitherLoseNorDoubleGrantIt() throws Exception {
        DefaultLockClient core = open();
        DistributedLock lock = client.lock("a", OPTIONS);
        AtomicInteger holding = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger grants = new AtomicInteger();
        List<Future<?>> workers = new ArrayList<>();
        SplittableRandom seeds = new SplittableRandom(20260101L);
        for (int t = 0; t < 8; t++) {
            SplittableRandom random = seeds.split();
            boolean async = t % 2 == 0;
            workers.add(callers.submit(() -> {
                for (int i = 0; i < 150; i++) {
                    Duration wait = Duration.ofMillis(random.nextInt(3));
                    Optional<Lease> l;
                    if (async) {
                        CompletableFuture<Optional<Lease>> f = lock.acquireAsync(wait.plusMillis(random.nextInt(3)));
                        if (random.nextInt(4) == 0) {
                            f.cancel(true);
                        }
                        try {
                            l = f.get(10, TimeUnit.SECONDS);
                        } catch (java.util.concurrent.CancellationException e) {
                            continue;
                        }
                    } else {
                        l = lock.tryAcquire(wait);
                    }
                    if (l.isPresent()) {
                        if (holding.incrementAndGet() > 1) {
                            overlaps.incrementAndGet();
                        }
                        grants.incrementAndGet();
                        holding.decrementAndGet();
                        l.get().release();
                    }
                }
                return null;
            }));
        }
        for (Future<?> w : workers) {
            w.get(60, TimeUnit.SECONDS);
        }
        assertEquals(0, overlaps.get(), "two callers of one client held the lock at once");
        assertTrue(grants.get() > 0);
        waitFor("every acquisition ended", () -> core.acquisitionCount() == 0);
        assertEquals(0, core.queue().size(), "a slot was left behind");
        assertEquals(0, core.heldCount());
        assertEquals(1, backend.maxInFlightPerName.get(), "two calls at once for one name from one client");
        assertTrue(lock.tryAcquire().isPresent(), "the slot was lost");
    }

    /**
     * An asynchronous acquisition whose next step is handed to the worker but has not started
     * (every worker thread is busy) ends when the client closes: close() does not count on that
     * step, which stopping the worker would drop.
     */
    @Test
    void closeEndsAnAsyncAcquireWhoseStepHasNotStarted() throws Exception {
        ExecutorService worker = Executors.newSingleThreadExecutor();
        CountDownLatch busy = new CountDownLatch(1);
        try (Fixture f = new Fixture(java.util.function.UnaryOperator.identity(), worker)) {
            worker.execute(() -> {
                try {
                    busy.await(30, TimeUnit.SECONDS); // the worker's only thread is taken
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            CompletableFuture<Optional<Lease>> pending = f.client.lock("a", OPTIONS).acquireAsync(Duration.ofHours(1));
            f.client.close();
            java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> pending.get(5, TimeUnit.SECONDS), "the future waited for a step the worker had not started");
            assertTrue(e.getCause() instanceof IllegalStateException, String.valueOf(e.getCause()));
            assertEquals(AcquireOutcome.FAILED, f.listener.lastOutcome());
            assertEquals(0, f.backend.tryOnceCalls.get(), "nothing was sent after close");
            busy.countDown();
            waitFor("the dropped step ran and did nothing", () -> f.client.acquisitionCount() == 0);
            assertEquals(0, f.backend.tryOnceCalls.get());
        } finally {
            busy.countDown();
        }
    }

    @Test
    void closeEndsPendingAsyncAcquiresWithoutWaitingForThem() throws Exception {
        DefaultLockClient core = open();
        backend.grabAsOther("a", Duration.ofHours(1));
        List<CompletableFuture<Optional<Lease>>> futures = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            futures.add(client.lock("a", OPTIONS).acquireAsync(Duration.ofHours(1)));
        }
        waitFor("a waiter on the server", () -> backend.turnCalls.get() > 0);
        client.close();
        for (CompletableFuture<Optional<Lease>> f : futures) {
            java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> f.get(10, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof IllegalStateException, String.valueOf(e.getCause()));
        }
        assertEquals(0, core.acquisitionCount());
        assertEquals(1, backend.abandonCalls.get(), "the waiter on the server was abandoned");
        assertTrue(backend.serverOwner("a").orElseThrow().startsWith("other-"), "the other client's lock is untouched");
    }
}
