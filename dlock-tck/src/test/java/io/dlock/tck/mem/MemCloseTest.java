package io.dlock.tck.mem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.tck.FreezableClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * close() of a client holding 1,000 leases, through the reference provider's emulated network:
 * bounded when the link is frozen, every lock freed at once when it is not.
 */
class MemCloseTest {

    private static final int LEASES = 1000;
    /** Long enough that no lock frees by expiry while a test runs: only a release explains a free lock. */
    private static final LockOptions OPTIONS = LockOptions.builder().leaseTime(Duration.ofSeconds(60)).build();
    /**
     * close() promises about two operation timeouts (1 s with the fixture's 500 ms); the rest is slack
     * for a loaded 2-core machine. Releasing one lease at a time would take 1,000 × 500 ms.
     */
    private static final Duration CLOSE_BOUND = Duration.ofSeconds(4);

    private final MemFixture fixture = new MemFixture();
    private final ExecutorService closer = Executors.newSingleThreadExecutor();

    @AfterEach
    void tearDown() throws InterruptedException {
        closer.shutdownNow();
        assertTrue(closer.awaitTermination(10, TimeUnit.SECONDS));
        fixture.close();
    }

    private static List<Lease> acquireAll(LockClient client) {
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < LEASES; i++) {
            leases.add(client.lock("close-" + i, OPTIONS).tryAcquire().orElseThrow());
        }
        return leases;
    }

    @Test
    void closeOnAFrozenLinkReturnsWithinAboutTwoOperationTimeouts() throws Exception {
        FreezableClient frozen = fixture.openFreezable(fixture.clientConfig()
                .operationTimeout(fixture.operationTimeout())).orElseThrow();
        try {
            List<Lease> leases = acquireAll(frozen.client());
            frozen.freeze();

            long start = System.nanoTime();
            Future<?> closing = closer.submit(() -> frozen.client().close());
            try {
                closing.get(CLOSE_BOUND.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                fail("close() on a frozen link still running after " + CLOSE_BOUND);
            }
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            System.out.println("mem: close() of " + LEASES + " leases on a frozen link took " + tookMs + " ms");
            for (Lease l : leases) {
                assertFalse(l.isValid());
            }
        } finally {
            frozen.close(); // unfreezes: the releases held back reach the server late
        }
    }

    @Test
    void closeOnAHealthyLinkFreesEveryLockAtOnce() {
        LockClient closing = LockClient.open(fixture.clientConfig().build());
        acquireAll(closing);
        closing.close();

        try (LockClient other = LockClient.open(fixture.clientConfig().build())) {
            int got = 0;
            for (int i = 0; i < LEASES; i++) {
                if (other.lock("close-" + i, OPTIONS).tryAcquire().isPresent()) {
                    got++;
                }
            }
            assertEquals(LEASES, got, "locks free right after close()");
        }
    }
}
