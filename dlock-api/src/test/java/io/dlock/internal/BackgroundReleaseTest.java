package io.dlock.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Many leases lost at once (a stalled backend): their best-effort releases run a few at a time,
 * not on a thread each, and every one of them is still sent.
 */
class BackgroundReleaseTest {

    private static final Duration LEASE = Duration.ofSeconds(30);

    @Test
    void releasesOfManyLostLeasesRunAFewAtATimeAndAllAreSent() throws Exception {
        // a real worker pool, as a client has: unbounded, a thread per task that finds none idle
        ExecutorService worker = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>());
        try (Fixture f = new Fixture(UnaryOperator.identity(), worker)) {
            int n = 50;
            List<DefaultLease<?>> leases = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                leases.add(f.acquire("lost-" + i, LEASE, false));
            }
            CountDownLatch gate = new CountDownLatch(1);
            f.backend.releaseGate = gate; // the backend stalls: every release hangs until the gate opens

            f.scheduler.advance(LEASE); // every lease expires together
            for (DefaultLease<?> l : leases) {
                assertFalse(l.isValid());
            }
            Fixture.waitFor("the first releases reach the backend",
                    () -> f.backend.releasesInFlight.get() == DefaultLockClient.BACKGROUND_RELEASES);
            assertEquals(DefaultLockClient.BACKGROUND_RELEASES, f.backend.maxReleasesInFlight.get(),
                    "releases in flight at once while the backend hangs");

            // the maximum is recorded as releases start: more than four at once, at any point until
            // the last one, shows in the assertion after them all
            gate.countDown();
            Fixture.waitFor("every lost lease's release sent", () -> f.backend.releaseCalls.get() == n);
            assertEquals(DefaultLockClient.BACKGROUND_RELEASES, f.backend.maxReleasesInFlight.get());
            Fixture.waitFor("no release in flight", () -> f.backend.releasesInFlight.get() == 0);
            assertEquals(n, f.listener.lost.size(), "every holder was told");
        } finally {
            worker.shutdownNow();
        }
    }
}
