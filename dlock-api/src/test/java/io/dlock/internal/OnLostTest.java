package io.dlock.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockLostException;
import io.dlock.LostReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class OnLostTest {

    private static final Duration LEASE = Duration.ofSeconds(30);

    private final Fixture f = new Fixture();

    @AfterEach
    void close() throws InterruptedException {
        f.close();
    }

    @Test
    void aListenerAddedAfterTheLossRunsAtOnceOnTheCallersThread() {
        DefaultLease<?> lease = f.acquire("a", LEASE, false);
        f.scheduler.advance(LEASE);
        assertFalse(lease.isValid());

        AtomicReference<Thread> ranOn = new AtomicReference<>();
        AtomicReference<LockLostException> got = new AtomicReference<>();
        lease.onLost(e -> {
            ranOn.set(Thread.currentThread());
            got.set(e);
        });
        assertSame(Thread.currentThread(), ranOn.get());
        assertEquals(LostReason.EXPIRED, got.get().reason());
        assertEquals(lease.fencingToken(), got.get().fencingToken());
    }

    @Test
    void neverFiresOnRelease() {
        DefaultLease<?> lease = f.acquire("a", LEASE, true);
        List<LockLostException> before = new ArrayList<>();
        List<LockLostException> after = new ArrayList<>();
        lease.onLost(before::add);
        lease.release();
        lease.onLost(after::add);
        f.backend.renewNotOwner = n -> true;
        f.scheduler.advance(LEASE.multipliedBy(3));
        f.client.close();

        assertTrue(before.isEmpty());
        assertTrue(after.isEmpty());
        assertTrue(f.listener.lost.isEmpty());
    }

    @Test
    void firesOnceWhateverEndsTheLease() {
        DefaultLease<?> lease = f.acquire("a", LEASE, true);
        List<LockLostException> lost = new ArrayList<>();
        lease.onLost(lost::add);
        f.backend.renewNotOwner = n -> true;

        f.scheduler.advance(Duration.ofSeconds(10)); // superseded
        f.backend.context.events().allLeasesLost(LostReason.SESSION_LOST);
        f.backend.context.events().leaseLost(lease.ownerId(), LostReason.SUPERSEDED);
        f.scheduler.advance(LEASE.multipliedBy(2)); // and the validity would have ended too
        assertFalse(lease.isValid());
        lease.release();

        assertEquals(1, lost.size());
        assertEquals(LostReason.SUPERSEDED, lost.get(0).reason());
        assertEquals(1, f.listener.lost.size());
    }

    @Test
    void allListenersRunEvenIfOneThrows() {
        DefaultLease<?> lease = f.acquire("a", LEASE, false);
        List<String> ran = new ArrayList<>();
        lease.onLost(e -> ran.add("first"));
        lease.onLost(e -> {
            throw new IllegalStateException("listener bug");
        });
        lease.onLost(e -> ran.add("third"));
        f.scheduler.advance(LEASE);
        assertEquals(List.of("first", "third"), ran);
    }

    @Test
    void aSessionLossMarksEveryLeaseBeforeAnyListenerRuns() {
        DefaultLease<?> a = f.acquire("a", LEASE, true);
        DefaultLease<?> b = f.acquire("b", LEASE, true);
        List<Boolean> otherValidWhenTold = new ArrayList<>();
        a.onLost(e -> otherValidWhenTold.add(b.isValid()));
        b.onLost(e -> otherValidWhenTold.add(a.isValid()));

        f.backend.context.events().allLeasesLost(LostReason.SESSION_LOST);

        // a listener that checks its other leases (to stop work guarded by any of them) must find them
        // all lost already: one session vouched for them all
        assertEquals(List.of(false, false), otherValidWhenTold);
    }

    @Test
    void aSessionLossEndsEveryLeaseAndFreesTheServerBestEffort() {
        DefaultLease<?> a = f.acquire("a", LEASE, true);
        DefaultLease<?> b = f.acquire("b", LEASE, false);
        List<LockLostException> lost = new ArrayList<>();
        a.onLost(lost::add);
        b.onLost(lost::add);

        f.backend.context.events().allLeasesLost(LostReason.SESSION_LOST);

        assertFalse(a.isValid());
        assertFalse(b.isValid());
        assertEquals(2, lost.size());
        assertTrue(lost.stream().allMatch(e -> e.reason() == LostReason.SESSION_LOST));
        assertEquals(LostReason.SESSION_LOST, assertThrows(LockLostException.class, a::ensureValid).reason());
        assertEquals(0, f.client.heldCount());
        assertEquals(0, f.client.queue().size());
        assertEquals(0, f.backend.serverHeldCount());
        // the names are free for this client again
        assertTrue(f.client.lock("a").tryAcquire().isPresent());
    }

    @Test
    void aBackendEventForOneLeaseEndsOnlyThatLease() {
        DefaultLease<?> a = f.acquire("a", LEASE, true);
        DefaultLease<?> b = f.acquire("b", LEASE, true);
        f.backend.context.events().leaseLost(a.ownerId(), LostReason.SUPERSEDED);
        assertFalse(a.isValid());
        assertTrue(b.isValid());
        assertEquals(LostReason.SUPERSEDED, assertThrows(LockLostException.class, a::ensureValid).reason());
    }

    @Test
    void aNullListenerIsRejected() {
        DefaultLease<?> lease = f.acquire("a", LEASE, false);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> lease.onLost(null));
        assertTrue(e.getMessage().contains("listener"), e.getMessage());
    }

    @Test
    void aLossReportedBeforeTheCoreHasTheGrantEndsTheLeaseOnceRegistered() {
        // the backend learns of the loss while tryOnce is still answering: it names the grant by
        // the owner id of the request, which the core knows before it has the lease
        f.backend.onGranted = owner -> f.backend.context.events().leaseLost(owner, LostReason.SUPERSEDED);
        List<LockLostException> lost = new ArrayList<>();
        DefaultLease<?> lease = f.acquire("a", LEASE, true);
        lease.onLost(lost::add);
        assertFalse(lease.isValid());
        assertEquals(LostReason.SUPERSEDED, assertThrows(LockLostException.class, lease::ensureValid).reason());
        assertEquals(1, lost.size(), "a listener added after the loss runs at once");
        assertEquals(1, f.listener.lost.size());
        assertEquals(0, f.client.heldCount());
    }

    @Test
    void aLossForAnOwnerIdTheClientDoesNotHoldIsIgnored() {
        DefaultLease<?> lease = f.acquire("a", LEASE, true);
        f.backend.context.events().leaseLost("0123456789abcdef0123456789abcdef", LostReason.SUPERSEDED);
        f.backend.context.events().leaseLost(null, LostReason.SUPERSEDED);
        assertTrue(lease.isValid());
        assertTrue(f.listener.lost.isEmpty());
        // and after an attempt ended without a grant, its owner id is forgotten
        f.backend.grabAsOther("b", LEASE);
        assertTrue(f.client.lock("b").tryAcquire().isEmpty());
        String busyOwner = f.backend.requests.get(f.backend.requests.size() - 1).ownerId();
        f.backend.context.events().leaseLost(busyOwner, LostReason.SUPERSEDED);
        assertTrue(lease.isValid());
        assertTrue(f.listener.lost.isEmpty());
    }

    @Test
    void theUsersLeaseIsNotWhatTheBackendSees() {
        io.dlock.Lease lease = f.acquire("a", LEASE, true);
        for (Class<?> type : lease.getClass().getInterfaces()) {
            assertTrue(type.getPackageName().equals("io.dlock"),
                    "the lease implements only API types, not " + type.getName());
        }
        assertFalse(((Object) lease) instanceof io.dlock.spi.Grant<?>, "a lease is no grant");
        assertEquals(f.backend.requests.get(0).ownerId(), lease.ownerId());
    }
}
