package io.dlock.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockLostException;
import io.dlock.LostReason;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ReleaseTest {

    private static final Duration LEASE = Duration.ofSeconds(30);

    private final Fixture f = new Fixture();

    @AfterEach
    void close() throws InterruptedException {
        f.close();
    }

    @Test
    void releaseIsIdempotentAndCallsTheBackendOnce() {
        DefaultLease<?> lease = f.acquire("a", LEASE, true);
        lease.release();
        lease.release();
        lease.close();

        assertEquals(1, f.backend.releaseCalls.get());
        assertEquals(1, f.backend.releasesThatFreed.get());
        assertEquals(1, f.listener.released.size());
        assertTrue(f.backend.serverOwner("a").isEmpty());
        assertEquals(0, f.client.heldCount());
        assertEquals(0, f.client.queue().size());
        assertEquals(0, f.backend.stateMismatches.get());
    }

    @Test
    void closeIsRelease() {
        try (Lease lease = f.acquire("a", LEASE, true)) {
            assertTrue(lease.isValid());
        }
        assertEquals(1, f.backend.releaseCalls.get());
        assertTrue(f.backend.serverOwner("a").isEmpty());
    }

    @Test
    void theReleasedListenerGetsTheHoldTime() {
        DefaultLease<?> lease = f.acquire("a", LEASE, true);
        f.scheduler.advance(Duration.ofSeconds(7));
        lease.release();

        assertEquals(1, f.listener.released.size());
        RecordingListener.Released r = f.listener.released.get(0);
        assertEquals("a", r.name());
        assertEquals(lease.fencingToken(), r.token());
        assertEquals(Duration.ofSeconds(7), r.held());
    }

    @Test
    void aFailedReleaseIsSwallowedLoggedAndTheLeaseIsStillReleasedLocally() {
        DefaultLease<?> lease = f.acquire("a", LEASE, true);
        f.backend.releaseThrows = true;
        String log;
        try (LogCapture capture = new LogCapture()) {
            lease.release(); // must not throw
            log = capture.text();
        }

        assertEquals(1, f.backend.releaseCalls.get());
        assertFalse(lease.isValid());
        assertThrows(IllegalStateException.class, lease::ensureValid);
        assertEquals(0, f.client.heldCount());
        assertEquals(0, f.client.renewer().size());
        assertEquals(0, f.client.queue().size());
        assertEquals(1, f.listener.released.size());
        assertTrue(log.contains("release of lock 'a'"), log);
        assertTrue(log.contains("WARN"), log);
        // no retry, and no renewal of a released lease
        lease.release();
        f.scheduler.advance(LEASE);
        assertEquals(1, f.backend.releaseCalls.get());
        assertTrue(f.backend.renewCalls.isEmpty());
    }

    @Test
    void aReleaseAfterExpiryNeverAffectsTheNewHolder() {
        DefaultLease<?> lease = f.acquire("a", LEASE, false);
        f.scheduler.advance(LEASE.plusSeconds(1)); // expired locally and on the server
        long otherToken = f.backend.grabAsOther("a", LEASE);
        assertTrue(otherToken > lease.fencingToken());

        lease.release();

        assertTrue(f.backend.serverOwner("a").orElseThrow().startsWith("other-"));
        assertEquals(LostReason.EXPIRED, assertThrows(LockLostException.class, lease::ensureValid).reason());
        assertTrue(f.listener.released.isEmpty(), "a lost lease is not reported as released");
    }

    @Test
    void tokensIncreaseAcrossGrants() {
        long previous = 0;
        for (int i = 0; i < 5; i++) {
            DefaultLease<?> lease = f.acquire("a", LEASE, true);
            assertTrue(lease.fencingToken() > previous);
            previous = lease.fencingToken();
            lease.release();
        }
    }
}
