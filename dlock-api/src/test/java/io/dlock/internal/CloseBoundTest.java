package io.dlock.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import io.dlock.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * close() is bounded: a client holding many leases on a backend that never answers returns within
 * about two operation timeouts, on a number of threads that does not grow with the leases, and its
 * holders are invalid at once.
 */
class CloseBoundTest {

    private static final Duration TIMEOUT = Duration.ofMillis(500);
    private static final int LEASES = 1000;
    private static final LockOptions OPTIONS = LockOptions.builder().leaseTime(Duration.ofMinutes(1)).build();
    /**
     * The promise is about two operation timeouts (1 s here): one shared deadline for the releases,
     * then at most one more for releases deaf to interrupts to give up. The rest is slack for a
     * loaded 2-core machine. Unbounded, the close would take 1,000 × 500 ms.
     */
    private static final Duration CLOSE_BOUND = Duration.ofSeconds(4);
    /** Far below one per lease: the close's senders plus the client's timer and a few spare. */
    private static final int MAX_NEW_THREADS = 40;

    private static LockClient open(FakeBackend backend) {
        return LockClient.open(LockClientConfig.builder("fake://x").operationTimeout(TIMEOUT)
                .retry(Duration.ofMillis(5), Duration.ofMillis(50)).build(), FakeProvider.of(backend));
    }

    @Test
    void closeOfAThousandLeasesOnAFrozenBackendIsBounded() throws Exception {
        Set<Thread> before = DlockThreads.alive();
        FakeBackend backend = new FakeBackend(Ticker.system());
        LockClient client = open(backend);
        ExecutorService closer = Executors.newSingleThreadExecutor();
        try {
            List<Lease> leases = new ArrayList<>();
            for (int i = 0; i < LEASES; i++) {
                leases.add(client.lock("held-" + i, OPTIONS).tryAcquire().orElseThrow());
            }
            backend.releaseStall = TIMEOUT; // the backend freezes: every release hangs for the operation timeout

            long start = System.nanoTime();
            Future<?> closing = closer.submit(client::close);
            Fixture.waitFor("the first releases reach the backend", () -> backend.releasesInFlight.get() > 0);
            int stillValid = 0;
            for (Lease l : leases) {
                stillValid += l.isValid() ? 1 : 0;
            }
            int threadsDuringClose = 0; // the most dlock threads seen while close() runs
            long end = start + CLOSE_BOUND.toNanos();
            while (!closing.isDone() && System.nanoTime() - end < 0) {
                threadsDuringClose = Math.max(threadsDuringClose, DlockThreads.alive().size() - before.size());
                Thread.sleep(5);
            }
            try {
                closing.get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                fail("close() still running after " + CLOSE_BOUND + " with " + backend.releaseCalls.get()
                        + " releases sent");
            }
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            System.out.println("close() of " + LEASES + " leases on a frozen backend: " + tookMs + " ms, "
                    + backend.releaseCalls.get() + " releases sent, at most " + backend.maxReleasesInFlight.get()
                    + " at once, " + threadsDuringClose + " new dlock threads");

            assertEquals(0, stillValid, "leases still valid while close() sends the releases");
            assertTrue(threadsDuringClose <= MAX_NEW_THREADS, "threads during close: " + threadsDuringClose);
            assertTrue(backend.maxReleasesInFlight.get() <= DefaultLockClient.CLOSE_RELEASES,
                    "releases in flight at once: " + backend.maxReleasesInFlight.get());
            assertTrue(backend.releaseCalls.get() < LEASES, "the releases not sent by the deadline are abandoned");
            for (Lease l : leases) {
                assertThrows(IllegalStateException.class, l::ensureValid, "released, not lost");
            }
            assertTrue(backend.closed);
            DlockThreads.assertNoneLeft(before);
        } finally {
            backend.releaseStallEnd.countDown();
            client.close();
            closer.shutdownNow();
            assertTrue(closer.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void closeOfAThousandLeasesOnAHealthyBackendReleasesEveryOne() throws Exception {
        Set<Thread> before = DlockThreads.alive();
        FakeBackend backend = new FakeBackend(Ticker.system());
        RecordingListener listener = new RecordingListener();
        LockClient client = LockClient.open(LockClientConfig.builder("fake://x").operationTimeout(TIMEOUT)
                .listener(listener).build(), FakeProvider.of(backend));
        for (int i = 0; i < LEASES; i++) {
            client.lock("held-" + i, OPTIONS).tryAcquire().orElseThrow();
        }
        client.close();

        assertEquals(LEASES, backend.releasesThatFreed.get());
        assertEquals(0, backend.serverHeldCount());
        assertEquals(LEASES, listener.released.size(), "every release is reported once");
        assertTrue(backend.closed);
        DlockThreads.assertNoneLeft(before);
    }

    @Test
    void closeAbandonsTheQueuedReleasesOfLostLeases() throws Exception {
        Set<Thread> before = DlockThreads.alive();
        FakeBackend backend = new FakeBackend(Ticker.system());
        LockClient client = open(backend);
        try {
            int n = 200;
            LockOptions shortLease = LockOptions.builder().leaseTime(Duration.ofMillis(300)).autoRenew(false).build();
            List<Lease> leases = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                leases.add(client.lock("lost-" + i, shortLease).tryAcquire().orElseThrow());
            }
            backend.releaseStall = TIMEOUT;
            // every lease expires; their best-effort releases queue behind a few that hang
            Fixture.waitFor("every lease lost", () -> leases.stream().noneMatch(Lease::isValid));
            Fixture.waitFor("the first background releases hang", () -> backend.releasesInFlight.get() > 0);

            long start = System.nanoTime();
            client.close();
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(tookMs <= CLOSE_BOUND.toMillis(), "close() took " + tookMs + " ms");
            // before, the queued releases went on after close(), a few at a time, for n/4 × 500 ms
            DlockThreads.assertNoneLeft(before);
            assertTrue(backend.releaseCalls.get() < n, "queued releases are abandoned at close");
        } finally {
            backend.releaseStallEnd.countDown();
            client.close();
        }
    }
}
