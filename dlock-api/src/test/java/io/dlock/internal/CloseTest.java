package io.dlock.internal;

import static io.dlock.internal.Fixture.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import io.dlock.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** TCK rule L7 in the core: close() releases, fails waiters, and stops every thread. */
class CloseTest {

    private static final LockOptions OPTIONS = LockOptions.builder().leaseTime(Duration.ofMinutes(1)).build();

    @Test
    void closeReleasesLeasesFailsWaitersAndStopsItsThreads() throws Exception {
        Set<Thread> before = DlockThreads.alive();
        FakeBackend backend = new FakeBackend(Ticker.system());
        LockClient client = LockClient.open(LockClientConfig.builder("fake://x")
                .retry(Duration.ofMillis(5), Duration.ofMillis(50)).build(), FakeProvider.of(backend));
        backend.startSessionThread(backend.context.threadFactory());
        ExecutorService callers = Executors.newCachedThreadPool();
        try {
            DistributedLock a = client.lock("a", OPTIONS);
            Lease held = a.tryAcquire().orElseThrow();
            Lease other = client.lock("b", OPTIONS).tryAcquire().orElseThrow();
            backend.grabAsOther("c", Duration.ofHours(1));

            // waiters of every kind: local (behind this client's own lease), on the server, async
            Future<?> localSync = callers.submit(() -> a.acquire());
            Future<?> localTimed = callers.submit(() -> a.tryAcquire(Duration.ofHours(1)));
            Future<?> serverSync = callers.submit(() -> client.lock("c", OPTIONS).acquire());
            CompletableFuture<Optional<Lease>> localAsync = a.acquireAsync(Duration.ofHours(1));
            CompletableFuture<Optional<Lease>> serverAsync = client.lock("c", OPTIONS).acquireAsync(Duration.ofHours(1));
            DefaultLockClient core = (DefaultLockClient) client;
            waitFor("three local waiters queued", () -> core.queue().waiting("a") == 3);
            waitFor("a server waiter", () -> backend.turnCalls.get() > 0);
            assertTrue(DlockThreads.alive().size() > before.size(), "the client runs threads of its own");

            client.close();

            assertFalse(held.isValid());
            assertFalse(other.isValid());
            assertThrows(IllegalStateException.class, held::ensureValid);
            assertEquals(2, backend.releasesThatFreed.get());
            for (Future<?> waiter : List.of(localSync, localTimed, serverSync)) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> waiter.get(10, TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof IllegalStateException, "a waiter got " + e.getCause());
            }
            for (CompletableFuture<Optional<Lease>> waiter : List.of(localAsync, serverAsync)) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> waiter.get(10, TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof IllegalStateException, "an async waiter got " + e.getCause());
            }
            assertEquals(1, backend.serverHeldCount(), "only the other client's lock is left on the server");
            assertTrue(backend.closed);
            DlockThreads.assertNoneLeft(before);

            // idempotent, and the client is unusable
            client.close();
            assertThrows(IllegalStateException.class, () -> client.lock("a"));
            assertThrows(IllegalStateException.class, a::tryAcquire);
            assertThrows(IllegalStateException.class, () -> a.acquireAsync(Duration.ZERO));
            assertTrue(client.toString().contains("closed"));
        } finally {
            client.close();
            callers.shutdownNow();
            assertTrue(callers.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void closeWithNothingHeldStopsTheThreads() throws InterruptedException {
        Set<Thread> before = DlockThreads.alive();
        LockClient client = LockClient.open("fake://x");
        FakeBackend backend = FakeProvider.lastOpened;
        // make the worker start a thread
        assertTrue(client.lock("a").acquireAsync(Duration.ZERO).join().orElseThrow().isValid());
        client.close();
        assertTrue(backend.closed);
        DlockThreads.assertNoneLeft(before);
    }

    @Test
    void aLeaseGrantedWhileTheClientClosesIsReleased() throws InterruptedException {
        Fixture f = new Fixture();
        try {
            DistributedLock lock = f.client.lock("a", OPTIONS);
            f.backend.onTryOnce = f.client::close; // close() runs while the grant is on its way

            IllegalStateException e = assertThrows(IllegalStateException.class, lock::tryAcquire);

            assertTrue(e.getMessage().contains("closed"), e.getMessage());
            assertEquals(Optional.empty(), f.backend.serverOwner("a"), "a grant during close stayed held");
            assertEquals(0, f.client.heldCount());
            assertEquals(0, f.client.queue().size());
        } finally {
            f.close();
        }
    }

    @Test
    void closeReleasesRatherThanLoses() throws InterruptedException {
        Fixture f = new Fixture();
        DefaultLease<?> lease = f.acquire("a", Duration.ofSeconds(30), true);
        List<Thread> ranOn = new ArrayList<>();
        lease.onLost(e -> ranOn.add(Thread.currentThread()));
        f.close();
        assertFalse(lease.isValid());
        assertTrue(ranOn.isEmpty(), "close releases, it does not lose");
        assertSame(DefaultLease.State.RELEASED, lease.state());
    }
}
