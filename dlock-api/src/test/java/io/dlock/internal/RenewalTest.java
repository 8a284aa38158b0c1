package io.dlock.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockLostException;
import io.dlock.LockOptions;
import io.dlock.LostReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The renewal pass, driven by the fake ticker and the manual scheduler. */
class RenewalTest {

    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration INTERVAL = Duration.ofSeconds(10); // leaseTime / 3
    private static final Duration MARGIN = Duration.ofMillis(350);

    private Fixture f = new Fixture();

    @AfterEach
    void close() throws InterruptedException {
        f.close();
    }

    @Test
    void renewsEveryThirdOfTheLeaseTime() {
        DefaultLease<?> lease = f.acquire("a", LEASE, true);
        long t0 = f.ticker.nanoTime();

        f.scheduler.advance(INTERVAL.minusNanos(1));
        assertEquals(0, f.backend.renewCalls.size(), "renewed before a third of the lease time");
        f.scheduler.advance(Duration.ofNanos(1));
        assertEquals(1, f.backend.renewCalls.size());
        assertEquals(t0 + INTERVAL.toNanos(), f.backend.renewCallTimes.get(0));

        f.scheduler.advance(INTERVAL.multipliedBy(9));
        assertEquals(10, f.backend.renewCalls.size());
        for (int i = 0; i < 10; i++) {
            assertEquals(t0 + INTERVAL.toNanos() * (i + 1), f.backend.renewCallTimes.get(i), "renewal " + i);
        }
        assertTrue(lease.isValid(), "held for many lease times");
        assertEquals(10, f.listener.renewed.size());
        assertEquals(0, f.backend.stateMismatches.get(), "the backend state is passed back unchanged");
    }

    @Test
    void aCustomRenewIntervalIsHonoured() {
        LockOptions o = LockOptions.builder().leaseTime(LEASE).renewInterval(Duration.ofSeconds(4)).build();
        long t0 = f.ticker.nanoTime();
        f.acquire("a", o);
        f.scheduler.advance(Duration.ofSeconds(12));
        assertEquals(List.of(t0 + 4_000_000_000L, t0 + 8_000_000_000L, t0 + 12_000_000_000L), f.backend.renewCallTimes);
    }

    @Test
    void renewalExtendsValidityFromItsSendTime() {
        DefaultLease<?> lease = f.acquire("a", LEASE, true);
        f.backend.renewRtt = Duration.ofMillis(50);
        long sent = f.ticker.nanoTime() + INTERVAL.toNanos();

        f.scheduler.advance(INTERVAL);
        // the answer came 50 ms after the request left; validity counts from when it left
        assertEquals(sent + LEASE.toNanos() - MARGIN.toNanos(), lease.validUntil());
        assertEquals(LEASE.minus(MARGIN).minusMillis(50), lease.remaining());
    }

    @Test
    void batchesManyDueLeasesIntoFewCalls() {
        List<DefaultLease<?>> leases = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            leases.add(f.acquire("lock-" + i, LEASE, true));
        }
        f.scheduler.advance(INTERVAL);

        List<List<String>> calls = f.backend.renewCalls;
        assertTrue(calls.size() <= 2, "300 leases in " + calls.size() + " calls");
        Set<String> renewed = new HashSet<>();
        for (List<String> batch : calls) {
            assertTrue(batch.size() <= Renewer.BATCH, "batch of " + batch.size());
            renewed.addAll(batch);
        }
        assertEquals(300, renewed.size());
        assertTrue(leases.stream().allMatch(DefaultLease::isValid));
    }

    @Test
    void coalescesLeasesDueWithinAQuarterInterval() {
        f.acquire("a", LEASE, true);          // due at 10 s
        f.ticker.advance(Duration.ofSeconds(2));
        f.acquire("b", LEASE, true);          // due at 12 s: within 2.5 s of 10 s
        f.ticker.advance(Duration.ofSeconds(1));
        f.acquire("c", LEASE, true);          // due at 13 s: not within 2.5 s of 10 s

        f.scheduler.advance(Duration.ofSeconds(7)); // to 10 s
        assertEquals(1, f.backend.renewCalls.size());
        assertEquals(Set.of("a", "b"), new HashSet<>(f.backend.renewCalls.get(0)));

        f.scheduler.advance(Duration.ofSeconds(3)); // to 13 s
        assertEquals(2, f.backend.renewCalls.size());
        assertEquals(List.of("c"), f.backend.renewCalls.get(1));
    }

    @Test
    void renewAnsweringNotOwnerLosesTheLeaseAsSuperseded() {
        DefaultLease<?> lease = f.acquire("a", LEASE, true);
        DefaultLease<?> other = f.acquire("b", LEASE, true);
        List<LockLostException> lost = new ArrayList<>();
        lease.onLost(lost::add);
        f.backend.renewNotOwner = "a"::equals;

        f.scheduler.advance(INTERVAL);

        assertFalse(lease.isValid());
        assertEquals(1, lost.size());
        assertEquals(LostReason.SUPERSEDED, lost.get(0).reason());
        assertEquals(LostReason.SUPERSEDED, assertThrows(LockLostException.class, lease::ensureValid).reason());
        assertTrue(other.isValid(), "the other lease in the batch is unaffected");
        assertEquals(0, f.backend.releaseCalls.get(), "nothing to release for a superseded lease");

        f.scheduler.advance(INTERVAL);
        assertEquals(List.of("b"), f.backend.renewCalls.get(1), "a lost lease is renewed no more");
        assertEquals(1, lost.size());
    }

    @Test
    void renewFailuresAreRetriedAndExpiryIsReportedOnceWithABestEffortRelease() {
        DefaultLease<?> lease = f.acquire("a", LEASE, true);
        long t0 = f.ticker.nanoTime();
        List<LockLostException> lost = Collections.synchronizedList(new ArrayList<>());
        lease.onLost(lost::add);
        f.backend.renewThrows = true;

        f.scheduler.advance(LEASE.minus(MARGIN).minusNanos(1));
        assertTrue(lease.isValid());
        int calls = f.backend.renewCalls.size();
        assertTrue(calls >= 2, "a failed renewal is retried: " + calls + " calls");
        assertTrue(calls <= 20, "retries are paced, not a busy loop: " + calls + " calls");
        for (int i = 1; i < calls; i++) {
            long gap = f.backend.renewCallTimes.get(i) - f.backend.renewCallTimes.get(i - 1);
            assertTrue(gap >= 20_000_000L, "retry " + i + " only " + gap + " ns after the previous one");
        }
        assertEquals(t0 + INTERVAL.toNanos(), f.backend.renewCallTimes.get(0));
        assertEquals(calls, f.listener.renewalFailed.size());
        assertTrue(lost.isEmpty());
        assertEquals(0, f.backend.releaseCalls.get());

        f.scheduler.advance(Duration.ofNanos(1));
        assertFalse(lease.isValid());
        assertEquals(1, lost.size());
        assertEquals(LostReason.EXPIRED, lost.get(0).reason());
        assertEquals(1, f.backend.releaseCalls.get(), "a best-effort release after the loss");

        f.scheduler.advance(LEASE.multipliedBy(3));
        assertEquals(1, lost.size(), "onLost fires exactly once");
        assertEquals(1, f.listener.lost.size());
        assertEquals(calls, f.backend.renewCalls.size(), "no renewal after the loss");
        assertEquals(1, f.backend.releaseCalls.get());
    }

    @Test
    void aRenewalThatSucceedsAfterAFailureKeepsTheLease() {
        DefaultLease<?> lease = f.acquire("a", LEASE, true);
        f.backend.renewThrows = true;
        f.scheduler.advance(INTERVAL);
        assertEquals(1, f.listener.renewalFailed.size());
        f.backend.renewThrows = false;
        f.scheduler.advance(INTERVAL);
        assertTrue(f.backend.renewCalls.size() >= 2);
        f.scheduler.advance(LEASE.multipliedBy(2));
        assertTrue(lease.isValid());
        assertTrue(f.listener.lost.isEmpty());
    }

    @Test
    void aRenewalAnsweredAfterExpiryDoesNotResurrectTheLease() {
        DefaultLease<?> lease = f.acquire("a", LEASE, true);
        List<LockLostException> lost = new ArrayList<>();
        lease.onLost(lost::add);
        f.backend.renewRtt = LEASE; // sent at 10 s, answered (true) at 40 s, after validity ended at ~29.7 s

        f.scheduler.advance(INTERVAL);

        assertFalse(lease.isValid());
        assertEquals(1, lost.size());
        assertEquals(LostReason.EXPIRED, lost.get(0).reason());
        assertTrue(f.listener.renewed.isEmpty());
    }

    @Test
    void timersFiringWhileAPassIsBlockedQueueAtMostOnePass() throws Exception {
        f.close();
        java.util.concurrent.ThreadPoolExecutor worker = new java.util.concurrent.ThreadPoolExecutor(0, Integer.MAX_VALUE,
                10, TimeUnit.SECONDS, new java.util.concurrent.SynchronousQueue<>());
        f = new Fixture(UnaryOperator.identity(), worker);
        f.acquire("first", LEASE, true);
        CountDownLatch gate = new CountDownLatch(1);
        f.backend.renewGate = gate;
        f.scheduler.advance(INTERVAL); // the pass starts on the worker and blocks in renew
        assertTrue(f.backend.renewEntered.await(10, TimeUnit.SECONDS));
        int peak = 0;
        for (int i = 0; i < 20; i++) {
            f.acquire("later-" + i, LEASE, true); // each schedules a timer for its own renewal...
            f.scheduler.advance(INTERVAL); // ...which fires while the first pass still blocks
            peak = Math.max(peak, threadsIn("io.dlock.internal.Renewer.pass"));
        }
        gate.countDown();
        // one thread in the blocked pass and one pass queued behind it, however many timers fired
        assertTrue(peak <= 2, "worker threads in a renewal pass while one was blocked: " + peak);
        worker.shutdown();
    }

    /** @return how many threads have a frame of this method on their stack */
    private static int threadsIn(String method) {
        int n = 0;
        for (StackTraceElement[] stack : Thread.getAllStackTraces().values()) {
            for (StackTraceElement frame : stack) {
                if ((frame.getClassName() + "." + frame.getMethodName()).equals(method)) {
                    n++;
                    break;
                }
            }
        }
        return n;
    }

    @Test
    void aRenewalAnswerArrivingAfterTheExpiryTimerFiredIsIgnored() throws Exception {
        f.close();
        ExecutorService worker = Executors.newSingleThreadExecutor();
        f = new Fixture(UnaryOperator.identity(), worker);
        DefaultLease<?> lease = f.acquire("a", LEASE, true);
        List<LockLostException> lost = Collections.synchronizedList(new ArrayList<>());
        lease.onLost(lost::add);
        CountDownLatch gate = new CountDownLatch(1);
        f.backend.renewGate = gate;

        f.scheduler.advance(INTERVAL); // the pass starts on the worker and blocks in renew
        assertTrue(f.backend.renewEntered.await(10, TimeUnit.SECONDS));
        f.scheduler.advance(LEASE); // meanwhile validity ends and the expiry timer fires
        assertEquals(DefaultLease.State.LOST, lease.state());
        assertEquals(1, f.listener.lost.size());

        gate.countDown(); // the renewal now answers "renewed"
        Future<?> barrier = worker.submit(() -> { }); // runs after the pass and the onLost listeners
        barrier.get(10, TimeUnit.SECONDS);

        assertFalse(lease.isValid());
        assertEquals(DefaultLease.State.LOST, lease.state());
        assertEquals(1, lost.size());
        assertEquals(LostReason.EXPIRED, lost.get(0).reason());
        assertTrue(f.listener.renewed.isEmpty());
        f.scheduler.advance(LEASE);
        assertEquals(1, f.backend.renewCalls.size(), "the lost lease is not renewed again");
    }

    @Test
    void leasesWithoutAutoRenewAreNeverRenewed() {
        DefaultLease<?> lease = f.acquire("a", LEASE, false);
        f.scheduler.advance(LEASE.multipliedBy(3));
        assertTrue(f.backend.renewCalls.isEmpty());
        assertFalse(lease.isValid());
        assertEquals(0, f.client.renewer().size());
    }

    @Test
    void releaseStopsRenewal() {
        DefaultLease<?> lease = f.acquire("a", LEASE, true);
        f.scheduler.advance(Duration.ofSeconds(5));
        lease.release();
        f.scheduler.advance(LEASE.multipliedBy(3));
        assertTrue(f.backend.renewCalls.isEmpty());
        assertEquals(0, f.client.renewer().size());
    }

    @Test
    void aBackendAnsweringTheWrongNumberOfResultsCountsAsAFailureNotALoss() {
        DefaultLease<?> lease = f.acquire("a", LEASE, true);
        f.backend.renewAnswersWrongLength = true;
        f.scheduler.advance(INTERVAL);
        assertTrue(lease.isValid(), "a malformed answer is an unknown outcome, not a loss");
        assertTrue(f.listener.renewalFailed.stream().anyMatch(t -> t instanceof IllegalStateException));
        f.scheduler.advance(LEASE);
        assertFalse(lease.isValid());
        assertEquals(LostReason.EXPIRED, assertThrows(LockLostException.class, lease::ensureValid).reason());
    }

    @Test
    void anUnknownOutcomeForOneGrantFailsOnlyThatLeaseAndKeepsTheOthersRenewed() {
        DefaultLease<?> a = f.acquire("a", LEASE, true);
        DefaultLease<?> b = f.acquire("b", LEASE, true);
        DefaultLease<?> c = f.acquire("c", LEASE, true);
        f.backend.renewUnknown = "b"::equals;

        f.scheduler.advance(INTERVAL);

        assertEquals(Set.of("a", "b", "c"), new HashSet<>(f.backend.renewCalls.get(0)), "one batch");
        assertEquals(Set.of("a", "c"), new HashSet<>(f.listener.renewed), "the grants that renewed count as renewed");
        assertEquals(1, f.listener.renewalFailed.size(), "only b failed");
        assertTrue(f.listener.renewalFailed.get(0).getMessage().contains("'b'"),
                "the failure is b's own: " + f.listener.renewalFailed.get(0));
        // b is retried soon, alone; a and c wait for their next interval
        f.scheduler.advance(Duration.ofSeconds(3));
        assertTrue(f.backend.renewCalls.size() >= 2);
        assertEquals(List.of("b"), f.backend.renewCalls.get(1), "the retry renews only the failed grant");

        // b keeps failing until its validity ends; a and c stay valid throughout
        f.scheduler.advance(LEASE);
        assertFalse(b.isValid());
        assertEquals(LostReason.EXPIRED, assertThrows(LockLostException.class, b::ensureValid).reason());
        assertTrue(a.isValid());
        assertTrue(c.isValid());
        assertEquals(0, f.backend.stateMismatches.get(), "each grant's state came back unchanged");
    }

    @Test
    void aBackendAnsweringANullOutcomeCountsAsAFailureOfTheBatch() {
        DefaultLease<?> lease = f.acquire("a", LEASE, true);
        f.backend.renewAnswersANullOutcome = true; // the core cannot tell what happened to that grant
        f.scheduler.advance(INTERVAL);
        assertTrue(lease.isValid(), "a malformed answer is an unknown outcome, not a loss");
        assertTrue(f.listener.renewalFailed.stream().anyMatch(t -> t instanceof IllegalStateException
                && t.getMessage().contains("null")), "failures: " + f.listener.renewalFailed);
    }
}
