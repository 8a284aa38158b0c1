package io.dlock.internal;

import static io.dlock.internal.Fixture.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import io.dlock.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The application's executor and scheduler: used for the client's work, bounded, never shut down by it. */
class UserExecutorTest {

    private final List<ExecutorService> pools = new ArrayList<>();

    private static ThreadFactory named(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    @AfterEach
    void stopPools() throws InterruptedException {
        for (ExecutorService p : pools) {
            p.shutdownNow();
            assertTrue(p.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    private static Set<Thread> newDlockThreads(Set<Thread> before) {
        Set<Thread> now = new HashSet<>(DlockThreads.alive());
        now.removeAll(before);
        return now;
    }

    @Test
    void theClientsWorkRunsOnTheApplicationsExecutorAndSchedulerWhichCloseLeavesRunning() throws Exception {
        ThreadPoolExecutor executor = new ThreadPoolExecutor(18, 18, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                named("app-exec-"));
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, named("app-timer-"));
        scheduler.setRemoveOnCancelPolicy(true);
        pools.add(executor);
        pools.add(scheduler);
        Set<Thread> before = DlockThreads.alive();
        FakeBackend backend = new FakeBackend(Ticker.system());
        LockClient client = LockClient.open(LockClientConfig.builder("fake://app").executor(executor).scheduler(scheduler)
                .retry(Duration.ofMillis(5), Duration.ofMillis(50)).build(), FakeProvider.of(backend));
        try {
            // renewals run on the executor, their timers on the scheduler
            Lease renewed = client.lock("r", LockOptions.builder().leaseTime(Duration.ofMillis(300)).build())
                    .tryAcquire().orElseThrow();
            assertEquals(Thread.currentThread().getName(), backend.tryOnceThreads.get(0),
                    "a blocking acquire tries on its caller's thread");
            waitFor("two renewals", () -> backend.renewCalls.size() >= 2);
            assertTrue(backend.renewThreads.stream().allMatch(t -> t.startsWith("app-exec-")), "renewed on "
                    + backend.renewThreads);
            assertTrue(scheduler.getCompletedTaskCount() > 0, "the client's timers ran on the scheduler");

            // an asynchronous acquire tries on the executor, and its future completes there
            backend.grabAsOther("a", Duration.ofHours(1));
            int from = backend.tryOnceThreads.size();
            AtomicReference<String> completedOn = new AtomicReference<>();
            CompletableFuture<Optional<Lease>> f = client.lock("a").acquireAsync(Duration.ofSeconds(30));
            CompletableFuture<Void> seen = f.thenAccept(l -> completedOn.set(Thread.currentThread().getName()));
            waitFor("waiting for its turn", () -> backend.turnCalls.get() > 0);
            backend.releaseOther("a");
            // the dependent first: a thread blocked in f.get() may help run f's dependents itself
            seen.get(10, TimeUnit.SECONDS);
            Lease a = f.get(10, TimeUnit.SECONDS).orElseThrow();
            List<String> asyncTries = new ArrayList<>(backend.tryOnceThreads.subList(from, backend.tryOnceThreads.size()));
            assertTrue(asyncTries.stream().allMatch(t -> t.startsWith("app-exec-")), "async tries ran on " + asyncTries);
            assertTrue(completedOn.get().startsWith("app-exec-"), "completed on " + completedOn);

            // onLost listeners run there too
            AtomicReference<String> lostOn = new AtomicReference<>();
            renewed.onLost(e -> lostOn.set(Thread.currentThread().getName()));
            backend.renewNotOwner = n -> n.equals("r");
            waitFor("the lease lost at its next renewal", () -> lostOn.get() != null);
            assertTrue(lostOn.get().startsWith("app-exec-"), "onLost ran on " + lostOn);

            assertEquals(Set.of(), newDlockThreads(before), "the client started threads of its own");
            a.release();
        } finally {
            client.close();
        }
        assertFalse(executor.isShutdown(), "close() shut the application's executor down");
        assertFalse(scheduler.isShutdown(), "close() shut the application's scheduler down");
        waitFor("the client's pending timers cancelled", () -> scheduler.getQueue().isEmpty());
        assertEquals(42, executor.submit(() -> 42).get(10, TimeUnit.SECONDS), "the executor still runs tasks");
    }

    /**
     * However many names are acquired asynchronously at once, the client hands an executor with
     * any number of threads at most {@link DefaultLockClient#ASYNC_TRIES} tries at a time; the
     * others wait in the client, holding no thread.
     */
    @Test
    void anUnboundedExecutorGetsABoundedNumberOfTriesAtOnce() throws Exception {
        ExecutorService executor = Executors.newCachedThreadPool(named("app-cached-"));
        pools.add(executor);
        FakeBackend backend = new FakeBackend(Ticker.system());
        AtomicInteger inTry = new AtomicInteger();
        AtomicInteger mostInTry = new AtomicInteger();
        backend.onTryOnce = () -> {
            mostInTry.accumulateAndGet(inTry.incrementAndGet(), Math::max);
            try {
                Thread.sleep(20); // a round trip: long enough for the tries to overlap
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                inTry.decrementAndGet();
            }
        };
        try (LockClient client = LockClient.open(LockClientConfig.builder("fake://cached").executor(executor).build(),
                FakeProvider.of(backend))) {
            List<CompletableFuture<Optional<Lease>>> futures = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                futures.add(client.lock("name-" + i).acquireAsync(Duration.ofSeconds(30)));
            }
            for (CompletableFuture<Optional<Lease>> f : futures) {
                assertTrue(f.get(30, TimeUnit.SECONDS).isPresent());
            }
            assertTrue(mostInTry.get() <= DefaultLockClient.ASYNC_TRIES, mostInTry + " tries at once");
            assertTrue(mostInTry.get() > 1, "the tries ran one at a time: " + mostInTry);
        }
    }
}
