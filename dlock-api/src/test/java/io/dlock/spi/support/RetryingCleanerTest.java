package io.dlock.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockBackendException;
import io.dlock.spi.support.RetryingCleaner.Outcome;
import io.dlock.spi.support.RetryingCleaner.Settings;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The kit's retrying cleaner. Timing: retries are checked from below (a scheduler never runs a task
 * early), and what must happen soon is awaited for up to 10 s ({@link TestWaits}), which a working
 * cleaner needs milliseconds for.
 */
class RetryingCleanerTest {

    private static final Duration FIRST = Duration.ofMillis(40);
    private static final Settings FAST = Settings.defaults().withDelays(FIRST, Duration.ofMillis(160));

    private final AtomicInteger threadsMade = new AtomicInteger();
    private RetryingCleaner cleaner;

    @AfterEach
    void close() {
        if (cleaner != null) {
            cleaner.close();
        }
    }

    private RetryingCleaner start(Settings settings) {
        cleaner = RetryingCleaner.start("kit", r -> {
            Thread t = new Thread(r, "kit-cleaner-" + threadsMade.incrementAndGet());
            t.setDaemon(true);
            return t;
        }, settings);
        return cleaner;
    }

    /** A task that answers RETRY {@code failures} times, then DONE, and notes when it ran. */
    private static RetryingCleaner.Task failing(int failures, List<Long> runs) {
        return () -> {
            runs.add(System.nanoTime());
            return runs.size() > failures ? Outcome.DONE : Outcome.RETRY;
        };
    }

    @Test
    void aFailedCleanUpIsRetriedWithAGrowingBackoffUntilDone() {
        RetryingCleaner c = start(FAST);
        List<Long> runs = new CopyOnWriteArrayList<>();
        long t0 = System.nanoTime();
        assertTrue(c.submit("k", failing(4, runs), Duration.ofMinutes(1)));
        assertEquals(1, c.pending());
        TestWaits.until("done after four failures", () -> c.pending() == 0);
        assertEquals(5, runs.size(), "tried until it was done, and not again");
        // never early: the first after FIRST, the next after FIRST again, then 2x, and the cap (4x = 160 ms)
        long[] least = {FIRST.toNanos(), FIRST.toNanos(), 2 * FIRST.toNanos(), 4 * FIRST.toNanos(),
                4 * FIRST.toNanos()};
        long prev = t0;
        for (int i = 0; i < runs.size(); i++) {
            assertTrue(runs.get(i) - prev >= least[i], "try " + i + " came " + (runs.get(i) - prev) + " ns after the one"
                    + " before, at least " + least[i] + " expected");
            prev = runs.get(i);
        }
    }

    @Test
    void aCleanUpIsGivenUpOnceItsExpiryHasPassed() throws Exception {
        RetryingCleaner c = start(FAST);
        List<Long> runs = new CopyOnWriteArrayList<>();
        long giveUp = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
        assertTrue(c.submit("k", failing(Integer.MAX_VALUE, runs), Duration.ofMillis(500)));
        TestWaits.until("given up", () -> c.pending() == 0);
        int tries = runs.size();
        assertTrue(tries >= 2, "retried before the expiry: " + tries);
        for (long at : runs) {
            assertTrue(at - giveUp < TimeUnit.MILLISECONDS.toNanos(50), "no try starts after the expiry");
        }
        Thread.sleep(500);
        assertEquals(tries, runs.size(), "not tried again once given up");
    }

    @Test
    void theQueueIsBoundedAndAReplacementDoesNotCount() {
        RetryingCleaner c = start(FAST.withMaxPending(2));
        RetryingCleaner.Task never = () -> Outcome.RETRY;
        Duration later = Duration.ofMinutes(1);
        assertTrue(c.submit("a", never, later, later));
        assertTrue(c.submit("b", never, later, later));
        assertFalse(c.submit("c", never, later, later), "full");
        assertFalse(c.submit("d", never, later, later), "still full");
        assertTrue(c.submit("a", never, later, later), "a replacement takes no room");
        assertEquals(2, c.pending());
        c.forget("b");
        assertTrue(c.submit("c", never, later, later));
        assertEquals(2, c.pending());
    }

    @Test
    void failuresThrownByATaskAreRetriedLikeARetry() {
        RetryingCleaner c = start(FAST);
        AtomicInteger tries = new AtomicInteger();
        c.submit("k", () -> switch (tries.incrementAndGet()) {
            case 1 -> throw new LockBackendException("no answer", "x", null);
            case 2 -> throw new IllegalStateException("a bug in the task");
            case 3 -> null;
            default -> Outcome.DONE;
        }, Duration.ofMinutes(1));
        TestWaits.until("done", () -> c.pending() == 0);
        assertEquals(4, tries.get());
    }

    @Test
    void aReplacedOrForgottenCleanUpIsNotTriedAgain() throws Exception {
        RetryingCleaner c = start(FAST);
        AtomicInteger old = new AtomicInteger();
        AtomicInteger replacement = new AtomicInteger();
        AtomicInteger forgotten = new AtomicInteger();
        c.submit("k", () -> {
            old.incrementAndGet();
            return Outcome.RETRY;
        }, Duration.ofMinutes(1));
        TestWaits.until("tried once", () -> old.get() >= 1);
        c.submit("k", () -> {
            replacement.incrementAndGet();
            return Outcome.DONE;
        }, Duration.ofMinutes(1));
        c.submit("gone", () -> {
            forgotten.incrementAndGet();
            return Outcome.RETRY;
        }, Duration.ofMillis(200), Duration.ofMinutes(1));
        c.forget("gone");
        TestWaits.until("the replacement ran", () -> replacement.get() == 1 && c.pending() == 0);
        int oldTries = old.get();
        Thread.sleep(400);
        assertEquals(oldTries, old.get(), "the replaced entry stopped");
        assertEquals(0, forgotten.get(), "the forgotten entry never ran");
    }

    @Test
    void aKickRetriesAtOnceWhatWasTriedButLeavesDelayedFirstTriesAlone() {
        // without kicks the second try would come after 30 s, the seventh after about 16 minutes
        RetryingCleaner c = start(Settings.defaults().withDelays(Duration.ofSeconds(30), Duration.ofMinutes(10)));
        AtomicInteger tries = new AtomicInteger();
        AtomicInteger delayed = new AtomicInteger();
        c.submit("k", () -> tries.incrementAndGet() > 6 ? Outcome.DONE : Outcome.RETRY, Duration.ZERO,
                ChronoUnit.FOREVER.getDuration());
        c.submit("later", () -> {
            delayed.incrementAndGet();
            return Outcome.DONE;
        }, Duration.ofMinutes(5), Duration.ofMinutes(10));
        TestWaits.until("tried", () -> tries.get() >= 1);
        for (int i = 0; i < 10 && c.pending() > 1; i++) {
            int before = tries.get();
            c.kick();
            TestWaits.until("a kick retries at once", () -> tries.get() > before || c.pending() == 1);
        }
        assertEquals(7, tries.get());
        assertEquals(1, c.pending(), "the delayed entry waits for its time");
        assertEquals(0, delayed.get());
    }

    @Test
    void closeIsBoundedDropsWhatIsPendingAndInterruptsRunningTries() throws Exception {
        RetryingCleaner c = start(FAST.withCloseWait(Duration.ofMillis(300)));
        CountDownLatch running = new CountDownLatch(2);
        AtomicBoolean interrupted = new AtomicBoolean();
        c.submit("stubborn", () -> {
            running.countDown();
            // ignores interrupts, as a blocking socket read does
            BoundedCalls.sleepUninterruptibly(Deadline.after(Duration.ofSeconds(20)));
            return Outcome.DONE;
        }, Duration.ZERO, Duration.ofMinutes(1));
        RetryingCleaner c2 = RetryingCleaner.start("kit2", r -> {
            Thread t = new Thread(r);
            t.setDaemon(true);
            return t;
        }, FAST.withCloseWait(Duration.ofSeconds(20)));
        try {
            c2.submit("polite", () -> {
                running.countDown();
                try {
                    Thread.sleep(20_000);
                } catch (InterruptedException e) {
                    interrupted.set(true);
                }
                return Outcome.RETRY;
            }, Duration.ZERO, Duration.ofMinutes(1));
            c.submit("queued", () -> Outcome.RETRY, Duration.ofMinutes(1), Duration.ofMinutes(2));
            assertTrue(running.await(10, TimeUnit.SECONDS));
            long t0 = System.nanoTime();
            c.close();
            long took = System.nanoTime() - t0;
            assertTrue(took < TimeUnit.SECONDS.toNanos(10), "close waited " + took + " ns for a 20 s task");
            assertTrue(took >= TimeUnit.MILLISECONDS.toNanos(250), "close waited for the running task: " + took);
            assertEquals(0, c.pending());
            assertTrue(c.isClosed());
            assertFalse(c.submit("after", () -> Outcome.DONE, Duration.ofMinutes(1)));
            t0 = System.nanoTime();
            c2.close();
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(10), "an interruptible try ends at close");
            assertTrue(interrupted.get());
        } finally {
            c2.close();
        }
        c.close(); // idempotent
    }

    @Test
    void triesRunOnTheBoundedThreadsWhateverTheNumberOfEntries() {
        RetryingCleaner c = start(FAST.withMaxPending(100));
        AtomicInteger done = new AtomicInteger();
        for (int i = 0; i < 50; i++) {
            c.submit(i, () -> {
                done.incrementAndGet();
                return Outcome.DONE;
            }, Duration.ZERO, Duration.ofMinutes(1));
        }
        TestWaits.until("all done", () -> done.get() == 50 && c.pending() == 0);
        assertEquals(1, threadsMade.get(), "one thread (the default) for 50 entries");
    }

    @Test
    void badArgumentsAreNamed() {
        RetryingCleaner c = start(FAST);
        assertNamed("backend", () -> RetryingCleaner.start("", Thread::new, FAST));
        assertNamed("threads", () -> RetryingCleaner.start("b", null, FAST));
        assertNamed("settings", () -> RetryingCleaner.start("b", Thread::new, null));
        assertNamed("key", () -> c.submit(null, () -> Outcome.DONE, Duration.ZERO));
        assertNamed("task", () -> c.submit("k", null, Duration.ZERO));
        assertNamed("giveUpAfter", () -> c.submit("k", () -> Outcome.DONE, Duration.ofMillis(-1)));
        assertNamed("notBefore", () -> c.submit("k", () -> Outcome.DONE, null, Duration.ZERO));
        assertNamed("maxPending", () -> FAST.withMaxPending(0));
        assertNamed("threads", () -> new Settings(1, 0, FIRST, FIRST, Duration.ZERO));
        assertNamed("firstDelay", () -> FAST.withDelays(Duration.ZERO, FIRST));
        assertNamed("maxDelay", () -> FAST.withDelays(FIRST, FIRST.dividedBy(2)));
        assertNamed("closeWait", () -> FAST.withCloseWait(null));
    }

    private static void assertNamed(String name, Runnable r) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, r::run);
        assertTrue(e.getMessage().startsWith(name), e.getMessage());
    }
}
