package io.dlock.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockLostException;
import io.dlock.LostReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Validity is computed on the ticker from the moment the request was sent, minus the drift margin. */
class LeaseValidityTest {

    private static final Duration LEASE = Duration.ofSeconds(10);
    /** 1% of 10 s plus 50 ms. */
    private static final Duration MARGIN = Duration.ofMillis(150);

    private final Fixture f = new Fixture();

    @AfterEach
    void close() throws InterruptedException {
        f.close();
    }

    @Test
    void driftMarginIsOnePercentPlusTheTimeToTellTheHolder() {
        assertEquals(MARGIN.toNanos(), DefaultLease.driftMargin(LEASE.toNanos()));
        assertEquals(Duration.ofMillis(350).toNanos(), DefaultLease.driftMargin(Duration.ofSeconds(30).toNanos()));
        assertEquals(Duration.ofMillis(56).toNanos(), DefaultLease.driftMargin(Duration.ofMillis(600).toNanos()));
        // a very short lease keeps most of its window: 1% plus a tenth
        assertEquals(100_000L + 1_000_000L, DefaultLease.driftMargin(Duration.ofMillis(10).toNanos()));
    }

    @Test
    void validityRunsFromTheTickerReadingTakenJustBeforeTryOnce() {
        f.backend.tryOnceRtt = Duration.ofMillis(40); // the answer arrives 40 ms after the request left
        long sentAt = f.ticker.nanoTime();
        DefaultLease<?> lease = f.acquire("a", LEASE, false);

        assertEquals(sentAt + LEASE.toNanos() - MARGIN.toNanos(), lease.validUntil());
        assertEquals(LEASE.minus(MARGIN).minusMillis(40), lease.remaining());
        assertTrue(lease.isValid());
    }

    @Test
    void aGrantOnAnOlderSharedLeaseIsValidFromTheLeaseStartNotTheRequest() {
        long leaseStart = f.ticker.nanoTime();
        f.ticker.advance(Duration.ofSeconds(3)); // the shared lease was last refreshed 3 s ago
        f.backend.leaseStartNanos = leaseStart;
        DefaultLease<?> lease = f.acquire("a", LEASE, false);

        assertEquals(leaseStart + LEASE.toNanos() - MARGIN.toNanos(), lease.validUntil());
        assertEquals(LEASE.minus(MARGIN).minusSeconds(3), lease.remaining());
    }

    @Test
    void aLeaseStartLaterThanTheRequestNeverExtendsValidity() {
        long sentAt = f.ticker.nanoTime();
        f.backend.leaseStartNanos = sentAt + Duration.ofSeconds(5).toNanos(); // a backend bug must not help
        DefaultLease<?> lease = f.acquire("a", LEASE, false);

        assertEquals(sentAt + LEASE.toNanos() - MARGIN.toNanos(), lease.validUntil());
    }

    @Test
    void isValidAndRemainingFollowTheTicker() {
        DefaultLease<?> lease = f.acquire("a", LEASE, false);
        Duration window = LEASE.minus(MARGIN);

        f.ticker.advance(window.minusNanos(1));
        assertTrue(lease.isValid());
        assertEquals(Duration.ofNanos(1), lease.remaining());
        lease.ensureValid();

        f.ticker.advanceNanos(1);
        assertFalse(lease.isValid());
        assertEquals(Duration.ZERO, lease.remaining());
    }

    @Test
    void ensureValidThrowsExpiredAfterExpiry() {
        DefaultLease<?> lease = f.acquire("a", LEASE, false);
        f.ticker.advance(LEASE);

        LockLostException e = assertThrows(LockLostException.class, lease::ensureValid);
        assertEquals(LostReason.EXPIRED, e.reason());
        assertEquals(lease.fencingToken(), e.fencingToken());
        assertEquals("a", e.lockName().orElseThrow());
        // and again: the lease stays lost
        assertEquals(LostReason.EXPIRED, assertThrows(LockLostException.class, lease::ensureValid).reason());
    }

    @Test
    void ensureValidThrowsIllegalStateAfterRelease() {
        DefaultLease<?> lease = f.acquire("a", LEASE, false);
        lease.release();

        assertFalse(lease.isValid());
        assertEquals(Duration.ZERO, lease.remaining());
        IllegalStateException e = assertThrows(IllegalStateException.class, lease::ensureValid);
        assertTrue(e.getMessage().contains("released"), e.getMessage());
    }

    @Test
    void theExpiryTimerEndsTheLeaseWithoutAnyoneAsking() {
        DefaultLease<?> lease = f.acquire("a", LEASE, false);
        List<LockLostException> lost = new ArrayList<>();
        lease.onLost(lost::add);

        f.scheduler.advance(LEASE.minus(MARGIN).minusNanos(1));
        assertTrue(lost.isEmpty());
        f.scheduler.advance(Duration.ofNanos(1));

        assertEquals(1, lost.size());
        assertEquals(LostReason.EXPIRED, lost.get(0).reason());
        assertEquals(List.of(new RecordingListener.Lost("a", lease.fencingToken(), LostReason.EXPIRED)),
                f.listener.lost);
        assertEquals(DefaultLease.State.LOST, lease.state());
        assertEquals(0, f.client.heldCount());
        assertEquals(0, f.client.queue().size());
    }

    @Test
    void aGrantWhoseAnswerArrivesAfterTheValidityWindowIsInvalidAtOnce() {
        f.backend.tryOnceRtt = LEASE; // the grant took as long as the lease
        DefaultLease<?> lease = f.acquire("slow", LEASE, true);

        assertFalse(lease.isValid());
        assertEquals(Duration.ZERO, lease.remaining());
        assertEquals(LostReason.EXPIRED, assertThrows(LockLostException.class, lease::ensureValid).reason());
        List<LockLostException> lost = new ArrayList<>();
        lease.onLost(lost::add);
        assertEquals(1, lost.size());
        // the client does not keep it, nor renew it, and tells the server it is done with it
        assertEquals(0, f.client.heldCount());
        assertEquals(0, f.client.renewer().size());
        assertTrue(f.backend.serverOwner("slow").isEmpty(), "a best-effort release frees the server early");
        f.scheduler.advance(Duration.ofSeconds(30));
        assertTrue(f.backend.renewCalls.isEmpty());
    }

    @Test
    void aGrantJustInsideTheWindowIsValidForWhatIsLeft() {
        f.backend.tryOnceRtt = LEASE.minus(MARGIN).minusMillis(1);
        DefaultLease<?> lease = f.acquire("slow", LEASE, false);
        assertTrue(lease.isValid());
        assertEquals(Duration.ofMillis(1), lease.remaining());
    }

    @Test
    void validityIsComputedSafelyAcrossTickerOverflow() throws InterruptedException {
        // System.nanoTime may be anywhere, including near Long.MAX_VALUE
        FakeTicker ticker = new FakeTicker(Long.MAX_VALUE - Duration.ofSeconds(1).toNanos());
        FakeBackend backend = new FakeBackend(ticker);
        ManualScheduler scheduler = new ManualScheduler(ticker);
        DefaultLockClient client = new DefaultLockClient(
                io.dlock.LockClientConfig.builder("fake://x").ticker(ticker).build(),
                FakeProvider.of(backend), scheduler, new DirectExecutorService());
        try {
            DefaultLease<?> lease = (DefaultLease<?>) client.lock("a", Fixture.options(LEASE, false)).tryAcquire().orElseThrow();
            ticker.advance(Duration.ofSeconds(5)); // the reading wraps to negative
            assertTrue(lease.isValid());
            assertEquals(LEASE.minus(MARGIN).minusSeconds(5), lease.remaining());
            scheduler.advance(Duration.ofSeconds(5));
            assertFalse(lease.isValid());
        } finally {
            client.close();
        }
    }
}
