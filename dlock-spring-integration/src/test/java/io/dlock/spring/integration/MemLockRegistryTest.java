package io.dlock.spring.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockLostException;
import io.dlock.tck.TestTiming;
import io.dlock.tck.mem.MemLink;
import io.dlock.tck.mem.MemServer;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.dao.CannotAcquireLockException;

/**
 * The registry against the {@code mem://} reference provider (a real backend that passes the TCK,
 * in this JVM, whose links can be frozen): the behaviours Spring Integration users rely on from
 * its own registries, checked on two registries over two clients ("two replicas").
 */
class MemLockRegistryTest {

    /** Generous: the machine is shared, so waits that should end at once are given seconds. */
    private static final Duration SLACK = Duration.ofSeconds(10);
    private static final Duration OPERATION_TIMEOUT = Duration.ofMillis(300);

    private final String server = "si-" + UUID.randomUUID();
    private LockClient clientA;
    private LockClient clientB;
    private DlockLockRegistry a;
    private DlockLockRegistry b;

    @BeforeEach
    void open() {
        clientA = LockClient.open(config("a-" + server));
        clientB = LockClient.open(config("b-" + server));
        a = DlockLockRegistry.builder(clientA).prefix("si:").leaseTime(Duration.ofMillis(900)).build();
        b = DlockLockRegistry.builder(clientB).prefix("si:").leaseTime(Duration.ofMillis(900)).build();
    }

    private LockClientConfig config(String link) {
        return LockClientConfig.builder("mem://" + server + "?link=" + link)
                .operationTimeout(OPERATION_TIMEOUT)
                .retry(Duration.ofMillis(5), Duration.ofMillis(50))
                .build();
    }

    private MemLink link(String id) {
        return MemServer.named(server).link(id).orElseThrow();
    }

    @AfterEach
    void close() {
        clientA.close();
        clientB.close();
        MemServer.drop(server);
    }

    /** Runs a body on another thread and returns its result (or throws what it threw). */
    private static <T> T onOtherThread(java.util.concurrent.Callable<T> body) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                f.complete(body.call());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        });
        t.start();
        try {
            return f.get(SLACK.toMillis() * 2, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof Exception ex) {
                throw ex;
            }
            throw e;
        }
    }

    @Test
    void twoRegistriesExcludeEachOtherAndHandOver() throws Exception {
        Lock la = a.obtain("job");
        Lock lb = b.obtain("job");
        assertTrue(la.tryLock());
        assertFalse(lb.tryLock(), "the other replica must not get a held lock");
        la.unlock();
        assertTrue(lb.tryLock(SLACK.toMillis(), TimeUnit.MILLISECONDS));
        assertFalse(la.tryLock());
        lb.unlock();

        // a waiter in lock() gets the lock when the holder unlocks
        la.lock();
        long firstToken = a.currentLease("job").orElseThrow().fencingToken();
        CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
            lb.lock();
            try {
                return b.currentLease("job").orElseThrow().fencingToken();
            } finally {
                lb.unlock();
            }
        });
        TestTiming.sleep(200);
        assertFalse(waiter.isDone(), "the waiter must wait while the lock is held");
        la.unlock();
        long secondToken = waiter.get(SLACK.toMillis(), TimeUnit.MILLISECONDS);
        assertTrue(secondToken > firstToken, "fencing tokens grow: " + firstToken + " then " + secondToken);
    }

    @Test
    void mutualExclusionUnderContentionFromFourThreadsOnTwoReplicas() throws Exception {
        AtomicBoolean inside = new AtomicBoolean();
        AtomicReference<String> overlap = new AtomicReference<>();
        int[] counter = {0};
        Thread[] threads = new Thread[4];
        for (int i = 0; i < threads.length; i++) {
            DlockLockRegistry registry = i % 2 == 0 ? a : b;
            threads[i] = new Thread(() -> {
                for (int n = 0; n < 25; n++) {
                    Lock lock = registry.obtain("counter");
                    lock.lock();
                    try {
                        if (!inside.compareAndSet(false, true)) {
                            overlap.set("two holders at once");
                        }
                        counter[0]++;
                        inside.set(false);
                    } finally {
                        lock.unlock();
                    }
                }
            });
            threads[i].start();
        }
        for (Thread t : threads) {
            t.join(60_000);
            assertFalse(t.isAlive(), "a worker did not finish within 60 s");
        }
        assertEquals(null, overlap.get());
        assertEquals(100, counter[0]);
    }

    @Test
    void reentrantForTheHoldingThreadAndHeldUntilTheLastUnlock() throws Exception {
        Lock lock = a.obtain("re");
        assertSame(lock, a.obtain("re"), "the same key gives the same lock while cached");
        lock.lock();
        assertTrue(lock.tryLock());
        assertTrue(lock.tryLock(1, TimeUnit.MILLISECONDS));
        lock.lockInterruptibly();
        long token = a.currentLease("re").orElseThrow().fencingToken();
        for (int i = 0; i < 3; i++) {
            lock.unlock();
            assertFalse(b.obtain("re").tryLock(), "still held after " + (i + 1) + " of 4 unlocks");
            assertEquals(token, a.currentLease("re").orElseThrow().fencingToken(), "one lease for all holds");
        }
        lock.unlock();
        assertTrue(a.currentLease("re").isEmpty());
        Lock other = b.obtain("re");
        assertTrue(other.tryLock());
        other.unlock();
    }

    @Test
    void threadsOfOneRegistryExcludeEachOther() throws Exception {
        Lock lock = a.obtain("local");
        lock.lock();
        try {
            assertFalse(onOtherThread(() -> lock.tryLock()));
            assertFalse(onOtherThread(() -> a.obtain("local").tryLock(100, TimeUnit.MILLISECONDS)));
            assertTrue(onOtherThread(() -> a.currentLease("local").isEmpty()),
                    "another thread sees no lease of its own");
        } finally {
            lock.unlock();
        }
        assertTrue(onOtherThread(() -> {
            boolean got = lock.tryLock();
            lock.unlock();
            return got;
        }));
    }

    @Test
    void tryLockWithTimeoutWaitsAboutThatLongThenGivesUp() throws Exception {
        Lock la = a.obtain("t");
        la.lock();
        try {
            // across replicas: the wait is on the backend
            Lock waiter = b.obtain("t");
            long start = System.nanoTime();
            boolean gotRemote = onOtherThread(() -> waiter.tryLock(400, TimeUnit.MILLISECONDS));
            long waitedRemoteMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertFalse(gotRemote);
            assertTrue(waitedRemoteMs >= 400, "gave up after " + waitedRemoteMs + " ms, before the 400 ms asked");
            // within one replica: the wait is on the local lock
            start = System.nanoTime();
            boolean got = onOtherThread(() -> la.tryLock(400, TimeUnit.MILLISECONDS));
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertFalse(got);
            assertTrue(waitedMs >= 400, "gave up after " + waitedMs + " ms, before the 400 ms asked");
            // zero and negative times make one attempt
            assertFalse(onOtherThread(() -> b.obtain("t").tryLock(0, TimeUnit.SECONDS)));
            assertFalse(onOtherThread(() -> b.obtain("t").tryLock(-5, TimeUnit.SECONDS)));
        } finally {
            la.unlock();
        }
        Lock lb = b.obtain("t");
        assertTrue(lb.tryLock(0, TimeUnit.SECONDS));
        lb.unlock();
    }

    @Test
    void lockInterruptiblyStopsOnInterruptAndLeavesNothingHeld() throws Exception {
        Lock la = a.obtain("i");
        Lock lb = b.obtain("i");
        la.lock();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicBoolean flagAfter = new AtomicBoolean(true);
        Thread waiter = new Thread(() -> {
            try {
                lb.lockInterruptibly();
                lb.unlock();
            } catch (Throwable e) {
                thrown.set(e);
                flagAfter.set(Thread.currentThread().isInterrupted());
            }
        });
        waiter.start();
        TestTiming.sleep(200);
        waiter.interrupt();
        waiter.join(SLACK.toMillis());
        assertFalse(waiter.isAlive());
        assertInstanceOf(InterruptedException.class, thrown.get());
        assertFalse(flagAfter.get(), "InterruptedException clears the flag, as Lock specifies");
        la.unlock();
        assertTrue(lb.tryLock(), "the interrupted waiter left nothing held");
        lb.unlock();

        // interrupted on entry: throws at once, even on a free lock
        assertThrows(InterruptedException.class, () -> onOtherThread(() -> {
            Thread.currentThread().interrupt();
            lb.lockInterruptibly();
            return null;
        }));
        // tryLock(time) is interruptible too
        la.lock();
        assertThrows(InterruptedException.class, () -> onOtherThread(() -> {
            Thread.currentThread().interrupt();
            return lb.tryLock(5, TimeUnit.SECONDS);
        }));
        la.unlock();
        assertTrue(lb.tryLock());
        lb.unlock();
    }

    @Test
    void lockIsNotInterruptibleButKeepsTheInterruptFlag() throws Exception {
        Lock la = a.obtain("u");
        Lock lb = b.obtain("u");
        la.lock();
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<Boolean> flagOnReturn = new CompletableFuture<>();
        Thread waiter = new Thread(() -> {
            started.countDown();
            lb.lock();
            flagOnReturn.complete(Thread.interrupted());
            lb.unlock();
        });
        waiter.start();
        started.await();
        TestTiming.sleep(200);
        waiter.interrupt();
        TestTiming.sleep(200);
        assertFalse(flagOnReturn.isDone(), "lock() must keep waiting when interrupted");
        la.unlock();
        assertTrue(flagOnReturn.get(SLACK.toMillis(), TimeUnit.MILLISECONDS),
                "lock() returns holding the lock with the interrupt flag set again");
        waiter.join(SLACK.toMillis());
    }

    @Test
    void unlockByAThreadThatDoesNotHoldItIsRefused() throws Exception {
        Lock lock = a.obtain("owner");
        assertThrows(IllegalMonitorStateException.class, lock::unlock, "never locked");
        lock.lock();
        assertThrows(IllegalMonitorStateException.class, () -> onOtherThread(() -> {
            lock.unlock();
            return null;
        }));
        assertFalse(b.obtain("owner").tryLock(), "a refused unlock leaves the lock held");
        lock.unlock();
        assertThrows(UnsupportedOperationException.class, lock::newCondition);
    }

    @Test
    void aLeaseLostWhileHeldIsReportedByUnlockAndRenewLock() throws Exception {
        Lock la = a.obtain("lost");
        la.lock();
        Lease lease = a.currentLease("lost").orElseThrow();
        // client A's link stops answering: its renewals fail and its lease (900 ms) runs out
        link("a-" + server).freeze();
        try {
            TestTiming.await("the lease is no longer valid", SLACK, () -> !lease.isValid());
            IllegalStateException renew = assertThrows(IllegalStateException.class, () -> a.renewLock("lost"));
            assertInstanceOf(LockLostException.class, renew.getCause());
            // replica B gets the lock once the server let it go
            Lock lb = b.obtain("lost");
            assertTrue(lb.tryLock(SLACK.toMillis(), TimeUnit.MILLISECONDS));
            lb.unlock();
            ConcurrentModificationException e = assertThrows(ConcurrentModificationException.class, la::unlock);
            assertInstanceOf(LockLostException.class, e.getCause());
        } finally {
            link("a-" + server).unfreeze();
        }
        // the local lock was released all the same: the lock is usable again
        assertThrows(IllegalMonitorStateException.class, la::unlock);
        assertTrue(onOtherThread(() -> {
            boolean got = la.tryLock(SLACK.toMillis(), TimeUnit.MILLISECONDS);
            la.unlock();
            return got;
        }));
    }

    @Test
    void aBackendFailureWhileLockingIsCannotAcquireLockWithinTheTimeoutAndHoldsNothing() throws Exception {
        Lock la = a.obtain("down");
        link("a-" + server).freeze();
        try {
            for (java.util.concurrent.Callable<?> attempt : java.util.List.<java.util.concurrent.Callable<?>>of(
                    () -> la.tryLock(), () -> la.tryLock(1, TimeUnit.SECONDS), () -> {
                        la.lock();
                        return null;
                    })) {
                long start = System.nanoTime();
                CannotAcquireLockException e = assertThrows(CannotAcquireLockException.class, attempt::call);
                assertInstanceOf(LockBackendException.class, e.getCause());
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertTrue(ms < SLACK.toMillis(), "failed after " + ms + " ms: bounded by the operation timeout");
                assertTrue(a.currentLease("down").isEmpty());
            }
        } finally {
            link("a-" + server).unfreeze();
        }
        assertThrows(IllegalMonitorStateException.class, la::unlock, "nothing held after a failure");
        Lock lb = b.obtain("down");
        assertTrue(lb.tryLock(SLACK.toMillis(), TimeUnit.MILLISECONDS), "no false grant left behind");
        lb.unlock();
    }

    @Test
    void renewLockConfirmsAHeldLockAndRefusesOthers() throws Exception {
        assertThrows(IllegalMonitorStateException.class, () -> a.renewLock("r"), "never obtained");
        Lock lock = a.obtain("r");
        assertThrows(IllegalMonitorStateException.class, () -> a.renewLock("r"), "not held");
        lock.lock();
        try {
            // held past several lease times (900 ms): renewed in the background all along
            for (int i = 0; i < 5; i++) {
                TestTiming.sleep(500);
                a.renewLock("r");
            }
            assertThrows(IllegalMonitorStateException.class, () -> onOtherThread(() -> {
                a.renewLock("r");
                return null;
            }));
            assertFalse(b.obtain("r").tryLock());
        } finally {
            lock.unlock();
        }
    }

    @Test
    void expireUnusedOlderThanDropsOnlyIdleLocks() throws Exception {
        Lock held = a.obtain("held");
        Lock idle = a.obtain("idle");
        held.lock();
        try {
            TestTiming.sleep(50);
            a.expireUnusedOlderThan(0);
            assertSame(held, a.obtain("held"), "a held lock stays");
            assertFalse(idle == a.obtain("idle"), "an idle lock is dropped and made anew");
            a.expireUnusedOlderThan(TimeUnit.HOURS.toMillis(1));
            assertEquals(2, a.cachedLocks(), "nothing idle for an hour");
        } finally {
            held.unlock();
        }
        assertThrows(IllegalArgumentException.class, () -> a.expireUnusedOlderThan(-1));
    }

    @Test
    void executeLockedFromLockRegistryRunsUnderTheLock() throws Exception {
        String result = a.executeLocked("exec", () -> {
            assertFalse(onOtherThread(() -> b.obtain("exec").tryLock()));
            return "ran";
        });
        assertEquals("ran", result);
        Lock lb = b.obtain("exec");
        lb.lock();
        try {
            assertThrows(TimeoutException.class, () -> a.executeLocked("exec", Duration.ofMillis(200), () -> { }));
        } finally {
            lb.unlock();
        }
    }

    @Test
    void aClosedClientIsIllegalStateAndLeavesTheLocalLockFree() throws Exception {
        Lock lock = a.obtain("closed");
        clientA.close();
        assertThrows(IllegalStateException.class, () -> lock.tryLock());
        assertThrows(IllegalStateException.class, lock::lock);
        assertThrows(IllegalStateException.class, () -> a.obtain("other"));
        assertThrows(IllegalMonitorStateException.class, lock::unlock, "nothing held after the refusal");
    }

    @Test
    void badInputIsIllegalArgumentNamingTheParameter() {
        assertMessageNames("client", () -> DlockLockRegistry.builder(null));
        assertMessageNames("client", () -> DlockLockRegistry.of(null));
        assertMessageNames("prefix", () -> DlockLockRegistry.builder(clientA).prefix(null));
        assertMessageNames("leaseTime", () -> DlockLockRegistry.builder(clientA).leaseTime(null));
        assertMessageNames("leaseTime", () -> DlockLockRegistry.builder(clientA).leaseTime(Duration.ZERO));
        assertMessageNames("lockKey", () -> a.obtain(null));
        assertMessageNames("lockKey", () -> a.obtain("x".repeat(LockClient.MAX_NAME_LENGTH + 1)));
        assertMessageNames("lockKey", () -> a.currentLease(null));
        assertMessageNames("lockKey", () -> a.renewLock(null));
        assertMessageNames("unit", () -> a.obtain("k").tryLock(1, null));
    }

    private static void assertMessageNames(String parameter, org.junit.jupiter.api.function.Executable body) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, body);
        assertTrue(e.getMessage().contains(parameter), "the message names " + parameter + ": " + e.getMessage());
    }

    @Test
    void keysMapToPrefixedNamesByToString() throws Exception {
        DlockLockRegistry plain = DlockLockRegistry.of(clientB);
        Lock byNumber = a.obtain(42);
        byNumber.lock();
        try {
            assertEquals("si:42", a.currentLease(42).orElseThrow().lockName());
            assertFalse(b.obtain("42").tryLock(), "the same string with the same prefix is the same lock");
            Lock unprefixed = plain.obtain("42");
            assertTrue(unprefixed.tryLock(), "another prefix is another lock");
            unprefixed.unlock();
        } finally {
            byNumber.unlock();
        }
        assertEquals("", plain.prefix());
        assertEquals(clientB.config().defaultLockOptions().leaseTime(), plain.lockOptions().leaseTime());
        assertTrue(plain.lockOptions().autoRenew());
    }
}
