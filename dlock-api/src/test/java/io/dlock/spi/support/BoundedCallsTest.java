package io.dlock.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockBackendException;
import io.dlock.spi.support.BoundedCalls.Call;
import io.dlock.spi.support.BoundedCalls.OnInterrupt;
import java.io.IOException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The kit's deadline-bounded calls and the interrupt rule. Timing: waits that must end early are
 * bounded by {@link #PROMPT} (seconds, for a loaded machine) against deadlines of 30 s, so they
 * can only pass by ending early; waits that must last are checked from below only.
 */
class BoundedCallsTest {

    /** Far longer than any of these waits takes when it ends as it should, far shorter than {@link #LONG}. */
    private static final long PROMPT = TimeUnit.SECONDS.toNanos(10);
    private static final Duration LONG = Duration.ofSeconds(30);

    /** The backend's own exceptions, so that the tests see the kit use them. */
    static final class Mine extends LockBackendException {
        final String kind;

        Mine(String kind, Call call) {
            super(kind + ": " + call.describe(), call.lockName(), null);
            this.kind = kind;
        }
    }

    private static final BoundedCalls.Failures MINE = new BoundedCalls.Failures() {
        @Override
        public LockBackendException timedOut(Call call, Duration waited) {
            return new Mine("timedOut", call);
        }

        @Override
        public LockBackendException interrupted(Call call, InterruptedException cause) {
            return new Mine("interrupted", call);
        }

        @Override
        public LockBackendException closed(Call call) {
            return new Mine("closed", call);
        }

        @Override
        public LockBackendException overloaded(Call call, int threads, int queued) {
            return new Mine("overloaded " + threads + "/" + queued, call);
        }
    };

    private final AtomicInteger threadsMade = new AtomicInteger();
    private BoundedCalls calls;

    @AfterEach
    void close() {
        if (calls != null) {
            calls.close();
        }
        Thread.interrupted(); // a test that failed must not leave the flag to the next
    }

    private BoundedCalls futures() {
        calls = BoundedCalls.forFutures("kit", LONG, MINE);
        return calls;
    }

    private BoundedCalls threads(int max, int queued) {
        calls = BoundedCalls.withThreads("kit", LONG, MINE, r -> {
            Thread t = new Thread(r, "kit-call-" + threadsMade.incrementAndGet());
            t.setDaemon(true);
            return t;
        }, max, queued);
        return calls;
    }

    /** Interrupts the given thread after a delay, from another thread. */
    private static void interruptLater(Thread target, long millis) {
        Thread t = new Thread(() -> {
            sleep(millis);
            target.interrupt();
        });
        t.setDaemon(true);
        t.start();
    }

    private static <T> void completeLater(CompletableFuture<T> f, T value, long millis) {
        Thread t = new Thread(() -> {
            sleep(millis);
            f.complete(value);
        });
        t.setDaemon(true);
        t.start();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Mine assertMine(String kind, Runnable r) {
        Mine e = assertThrows(Mine.class, r::run);
        assertEquals(kind, e.kind, e.getMessage());
        return e;
    }

    @Test
    void finishWaitsForTheAnswerThroughAnInterruptAndSetsTheFlagAgain() {
        BoundedCalls c = futures();
        CompletableFuture<String> f = c.track(new CompletableFuture<>());
        interruptLater(Thread.currentThread(), 50);
        completeLater(f, "answer", 400);
        long t0 = System.nanoTime();
        assertEquals("answer", c.await(f, c.deadline(), OnInterrupt.FINISH, "release", "x"));
        long took = System.nanoTime() - t0;
        assertTrue(Thread.interrupted(), "the interrupt is kept for the caller");
        assertTrue(took >= TimeUnit.MILLISECONDS.toNanos(350), "waited for the answer, not cut short: " + took);
    }

    @Test
    void finishWithTheFlagAlreadySetStillWaitsAndKeepsIt() {
        BoundedCalls c = futures();
        CompletableFuture<String> f = c.track(new CompletableFuture<>());
        completeLater(f, "answer", 300);
        Thread.currentThread().interrupt();
        long t0 = System.nanoTime();
        assertEquals("answer", c.await(f, c.deadline(), OnInterrupt.FINISH, "release", null));
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(250));
        assertTrue(Thread.interrupted());
    }

    @Test
    void abortEndsTheWaitAtOnceCancelsTheCallAndKeepsTheFlag() {
        BoundedCalls c = futures();
        CompletableFuture<String> f = c.track(new CompletableFuture<>());
        interruptLater(Thread.currentThread(), 100);
        long t0 = System.nanoTime();
        Mine e = assertMine("interrupted", () -> c.await(f, c.deadline(), OnInterrupt.ABORT, "acquire", "x"));
        assertTrue(System.nanoTime() - t0 < PROMPT, "ended at the interrupt, not at the 30 s deadline");
        assertEquals("interrupted: the acquire of lock 'x'", e.getMessage());
        assertTrue(Thread.interrupted(), "the flag is set when the exception is thrown");
        assertTrue(f.isCancelled(), "the call is cancelled");
        assertEquals(0, c.pending());
    }

    @Test
    void anAnswerAlreadyInIsReturnedToAnInterruptedAbortingCaller() {
        BoundedCalls c = futures();
        CompletableFuture<String> f = c.track(CompletableFuture.completedFuture("in"));
        Thread.currentThread().interrupt();
        assertEquals("in", c.await(f, c.deadline(), OnInterrupt.ABORT, "acquire", "x"));
        assertTrue(Thread.interrupted());
    }

    @Test
    void theDeadlineEndsTheWaitWithTheBackendsTimeoutAndCancelsTheCall() {
        BoundedCalls c = futures();
        CompletableFuture<String> f = c.track(new CompletableFuture<>());
        long t0 = System.nanoTime();
        assertMine("timedOut", () -> c.await(f, Deadline.after(Duration.ofMillis(300)), OnInterrupt.FINISH,
                "renewal", null));
        long took = System.nanoTime() - t0;
        assertTrue(took >= TimeUnit.MILLISECONDS.toNanos(300) && took < PROMPT, "took " + took);
        assertTrue(f.isCancelled());
        assertEquals(0, c.pending());
        assertFalse(Thread.currentThread().isInterrupted(), "no interrupt came, none is reported");
    }

    @Test
    void anInterruptDuringAFinishWaitThatTimesOutIsKept() {
        BoundedCalls c = futures();
        CompletableFuture<String> f = c.track(new CompletableFuture<>());
        interruptLater(Thread.currentThread(), 50);
        long t0 = System.nanoTime();
        assertMine("timedOut", () -> c.await(f, Deadline.after(Duration.ofMillis(400)), OnInterrupt.FINISH,
                "release", "x"));
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(400), "not cut short by the interrupt");
        assertTrue(Thread.interrupted());
    }

    @Test
    void closeFailsEveryPendingWaitAtOnceAndEveryLaterCall() throws Exception {
        BoundedCalls c = futures();
        CompletableFuture<String> f = c.track(new CompletableFuture<>());
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        CountDownLatch waiting = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            waiting.countDown();
            try {
                c.await(f, c.deadline(), OnInterrupt.FINISH, "acquire", "x");
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        waiter.start();
        waiting.await();
        Thread.sleep(100); // the waiter is in its wait
        long t0 = System.nanoTime();
        c.close();
        waiter.join(TimeUnit.NANOSECONDS.toMillis(PROMPT));
        assertFalse(waiter.isAlive(), "close() ended the 30 s wait");
        assertTrue(System.nanoTime() - t0 < PROMPT);
        assertTrue(thrown.get() instanceof Mine m && m.kind.equals("closed")
                && m.lockName().equals(java.util.Optional.of("x")), String.valueOf(thrown.get()));
        assertTrue(c.isClosed());
        CompletableFuture<String> later = c.track(new CompletableFuture<>());
        assertTrue(later.isCompletedExceptionally(), "a request tracked after close fails at once");
        assertMine("closed", () -> c.await(later, c.deadline(), OnInterrupt.ABORT, "release", "y"));
        c.close(); // idempotent
    }

    @Test
    void uncheckedFailuresReachTheBackendUnchangedAndCheckedOnesGoThroughFailed() {
        BoundedCalls c = futures();
        IllegalStateException library = new IllegalStateException("the library's own");
        assertSame(library, assertThrows(IllegalStateException.class, () -> c.await(
                CompletableFuture.failedFuture(library), c.deadline(), OnInterrupt.ABORT, "read", null)));
        LockBackendException e = assertThrows(LockBackendException.class, () -> c.await(
                CompletableFuture.failedFuture(new IOException("reset")), c.deadline(), OnInterrupt.ABORT, "read", "n"));
        assertEquals("kit: the read of lock 'n' failed: java.io.IOException: reset", e.getMessage());
        assertTrue(e.getCause() instanceof IOException);
    }

    @Test
    void blockingCallsRunOnTheBackendsThreadsAndAnAbortInterruptsThem() throws Exception {
        BoundedCalls c = threads(2, 4);
        assertEquals("done", c.call(() -> Thread.currentThread().getName().startsWith("kit-call-") ? "done" : "caller",
                c.deadline(), OnInterrupt.ABORT, "read", null));
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean bodyInterrupted = new AtomicBoolean();
        interruptLater(Thread.currentThread(), 200);
        long t0 = System.nanoTime();
        assertMine("interrupted", () -> c.call(() -> {
            started.countDown();
            try {
                Thread.sleep(LONG.toMillis());
            } catch (InterruptedException e) {
                bodyInterrupted.set(true);
            }
            return "late";
        }, c.deadline(), OnInterrupt.ABORT, "acquire", "x"));
        assertTrue(System.nanoTime() - t0 < PROMPT);
        assertTrue(Thread.interrupted());
        assertTrue(started.await(5, TimeUnit.SECONDS));
        TestWaits.until("the request's thread was interrupted", bodyInterrupted::get);
    }

    @Test
    void aBlockingCallPastItsDeadlineFailsInTimeAndIsInterrupted() {
        BoundedCalls c = threads(1, 1);
        AtomicBoolean bodyInterrupted = new AtomicBoolean();
        long t0 = System.nanoTime();
        assertMine("timedOut", () -> c.call(() -> {
            try {
                Thread.sleep(LONG.toMillis());
            } catch (InterruptedException e) {
                bodyInterrupted.set(true);
            }
            return "late";
        }, Deadline.after(Duration.ofMillis(300)), OnInterrupt.FINISH, "release", "x"));
        long took = System.nanoTime() - t0;
        assertTrue(took >= TimeUnit.MILLISECONDS.toNanos(300) && took < PROMPT, "took " + took);
        TestWaits.until("the request's thread was interrupted", bodyInterrupted::get);
    }

    @Test
    void blockingCallsAreBoundedByThreadsAndQueueWhateverTheNumberOfCallers() throws Exception {
        BoundedCalls c = threads(1, 1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(1);
        Thread first = new Thread(() -> c.call(() -> {
            running.countDown();
            release.await();
            return 1;
        }, c.deadline(), OnInterrupt.FINISH, "a", null));
        first.start();
        assertTrue(running.await(5, TimeUnit.SECONDS));
        AtomicReference<Object> second = new AtomicReference<>();
        Thread queued = new Thread(() -> second.set(c.call(() -> 2, c.deadline(), OnInterrupt.FINISH, "b", null)));
        queued.start();
        // waiting for its answer, so handed to the pool already
        TestWaits.until("the second call waits in the queue", () -> queued.getState() == Thread.State.TIMED_WAITING);
        assertMine("overloaded 1/1", () -> c.call(() -> 3, c.deadline(), OnInterrupt.FINISH, "c", "z"));
        release.countDown();
        first.join(5000);
        queued.join(5000);
        assertEquals(2, second.get());
        assertEquals(1, threadsMade.get(), "one call thread served every call");
    }

    @Test
    void requestsStartedTogetherRunAtOnceAndAreAwaitedEach() {
        BoundedCalls c = threads(2, 4);
        CountDownLatch both = new CountDownLatch(2);
        java.util.List<CompletableFuture<String>> started = new java.util.ArrayList<>();
        for (String s : new String[] {"a", "b"}) {
            started.add(c.start(() -> {
                both.countDown();
                // each waits for the other: only requests that run at once both get past this
                return both.await(10, TimeUnit.SECONDS) ? s : "alone";
            }, "renewal", s));
        }
        assertEquals("a", c.await(started.get(0), c.deadline(), OnInterrupt.ABORT, "renewal", "a"));
        assertEquals("b", c.await(started.get(1), c.deadline(), OnInterrupt.ABORT, "renewal", "b"));
        c.close();
        CompletableFuture<String> late = c.start(() -> "late", "renewal", null);
        assertMine("closed", () -> c.await(late, c.deadline(), OnInterrupt.ABORT, "renewal", null));
    }

    @Test
    void aBlockingCallAfterCloseFailsAtOnce() {
        BoundedCalls c = threads(1, 1);
        c.close();
        assertMine("closed", () -> c.call(() -> 1, c.deadline(), OnInterrupt.ABORT, "release", "x"));
        assertThrows(IllegalStateException.class,
                () -> futures().call(() -> 1, Deadline.after(LONG), OnInterrupt.ABORT, "read", null));
    }

    @Test
    void hugeDurationsSaturateInsteadOfOverflowing() {
        for (Duration huge : new Duration[] {Duration.ofSeconds(Long.MAX_VALUE), ChronoUnit.FOREVER.getDuration(),
                Duration.ofDays(365L * 300)}) {
            Deadline d = Deadline.after(huge);
            assertFalse(d.expired());
            assertTrue(d.remaining().compareTo(Duration.ofDays(365L * 70)) > 0, d.toString());
            BoundedCalls c = BoundedCalls.forFutures("kit", huge, MINE);
            assertFalse(c.deadline().expired());
            assertEquals("x", c.await(CompletableFuture.completedFuture("x"), c.deadline(), OnInterrupt.ABORT, "r", null));
            assertTrue(BoundedCalls.awaitUninterruptibly(CompletableFuture.completedFuture(1), d));
            assertTrue(d.atMost(Duration.ofSeconds(1)).remaining().compareTo(Duration.ofSeconds(1)) <= 0,
                    "atMost picks the earlier deadline");
            assertSame(d, d.atMost(huge));
        }
        assertTrue(Deadline.after(Duration.ZERO).expired());
        assertEquals(Duration.ZERO, Deadline.at(System.nanoTime() - 1).remaining());
    }

    @Test
    void theUninterruptibleWaitsKeepTheirTimeAndTheFlag() {
        CompletableFuture<String> never = new CompletableFuture<>();
        interruptLater(Thread.currentThread(), 50);
        long t0 = System.nanoTime();
        assertFalse(BoundedCalls.awaitUninterruptibly(never, Deadline.after(Duration.ofMillis(300))));
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(300));
        assertTrue(Thread.interrupted());

        Thread.currentThread().interrupt(); // set before: still waits
        CompletableFuture<String> soon = new CompletableFuture<>();
        completeLater(soon, "s", 200);
        t0 = System.nanoTime();
        assertTrue(BoundedCalls.awaitUninterruptibly(soon, Deadline.after(LONG)));
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(150));
        assertTrue(Thread.interrupted());

        interruptLater(Thread.currentThread(), 50);
        t0 = System.nanoTime();
        BoundedCalls.sleepUninterruptibly(Deadline.after(Duration.ofMillis(300)));
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(300));
        assertTrue(Thread.interrupted());
    }

    @Test
    void theNeutralMessagesNameTheBackendTheOperationAndTheLock() {
        Call call = new Call("etcd", "release", "orders");
        BoundedCalls.Failures d = BoundedCalls.Failures.DEFAULT;
        assertEquals("etcd: the release of lock 'orders' got no answer within 1500 ms",
                d.timedOut(call, Duration.ofMillis(1500)).getMessage());
        assertEquals("etcd: the release of lock 'orders' was interrupted; its outcome is unknown",
                d.interrupted(call, new InterruptedException()).getMessage());
        assertEquals("etcd: the release of lock 'orders' failed: the lock client is closed", d.closed(call).getMessage());
        assertEquals("etcd: the renewal was not sent: 8 calls of this client already wait for one of its 2 call "
                + "threads; try again later", d.overloaded(new Call("etcd", "renewal", null), 2, 8).getMessage());
        assertEquals(java.util.Optional.of("orders"), d.closed(call).lockName());
    }

    @Test
    void badArgumentsAreNamed() {
        BoundedCalls c = futures();
        assertNamed("backend", () -> BoundedCalls.forFutures(" ", LONG, MINE));
        assertNamed("operationTimeout", () -> BoundedCalls.forFutures("b", Duration.ZERO, MINE));
        assertNamed("failures", () -> BoundedCalls.forFutures("b", LONG, null));
        assertNamed("threads", () -> BoundedCalls.withThreads("b", LONG, MINE, null, 1, 1));
        assertNamed("maxThreads", () -> BoundedCalls.withThreads("b", LONG, MINE, Thread::new, 0, 1));
        assertNamed("maxQueued", () -> BoundedCalls.withThreads("b", LONG, MINE, Thread::new, 1, 0));
        assertNamed("future", () -> c.track(null));
        assertNamed("deadline", () -> c.await(new CompletableFuture<>(), null, OnInterrupt.ABORT, "r", null));
        assertNamed("mode", () -> c.await(new CompletableFuture<>(), c.deadline(), null, "r", null));
        assertNamed("operation", () -> c.await(new CompletableFuture<>(), c.deadline(), OnInterrupt.ABORT, null, null));
        assertNamed("timeout must not be negative", () -> Deadline.after(Duration.ofMillis(-1)));
        assertNamed("until", () -> BoundedCalls.sleepUninterruptibly(null));
    }

    private static void assertNamed(String name, Runnable r) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, r::run);
        assertTrue(e.getMessage().startsWith(name), e.getMessage());
    }
}
