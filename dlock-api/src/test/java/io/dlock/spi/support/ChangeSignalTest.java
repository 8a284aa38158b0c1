package io.dlock.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ChangeSignalTest {

    @Test
    void aSignalCompletesTheStagesWaitingForTheGenerationItEnds() {
        ChangeSignal s = new ChangeSignal();
        long g = s.generation();
        CompletableFuture<Void> a = s.changeAfter(g);
        CompletableFuture<Void> b = s.changeAfter(g);
        assertFalse(a.isDone());
        assertFalse(b.isDone());
        s.signal();
        assertTrue(a.isDone() && b.isDone());
        assertEquals(g + 1, s.generation());
        assertFalse(s.changeAfter(g + 1).isDone(), "a wait for the new generation waits again");
    }

    @Test
    void aChangeBetweenTheReadAndTheWaitIsNotLost() {
        ChangeSignal s = new ChangeSignal();
        long seen = s.generation(); // what a try saw
        s.signal(); // a release told while the try was on its way
        assertTrue(s.changeAfter(seen).isDone(), "the wait after the try must end at once");
        assertEquals(0, s.held());
    }

    @Test
    void closeEndsEveryWaitForGood() {
        ChangeSignal s = new ChangeSignal();
        long g = s.generation();
        CompletableFuture<Void> waiting = s.changeAfter(g);
        s.close();
        assertTrue(waiting.isDone());
        assertTrue(s.isClosed());
        long after = s.generation();
        assertTrue(s.changeAfter(after).isDone(), "a wait after close ends at once");
        s.signal();
        s.close();
        assertEquals(after, s.generation(), "signal and close do nothing once closed");
        assertEquals(0, s.held());
    }

    @Test
    void stagesGivenUpOnAreDropped() {
        ChangeSignal s = new ChangeSignal();
        long g = s.generation();
        for (int i = 0; i < 1000; i++) {
            s.changeAfter(g).complete(null); // the waiter gives up (its turn is over)
        }
        assertTrue(s.held() <= 1, "held " + s.held() + " stages after 1000 abandoned waits");
        CompletableFuture<Void> live = s.changeAfter(g);
        assertEquals(1, s.held());
        s.signal();
        assertTrue(live.isDone());
        assertEquals(0, s.held());
    }

    @Test
    void stagesAreCompletedOutsideTheLockAndEachOnItsOwn() throws Exception {
        ChangeSignal s = new ChangeSignal();
        long g = s.generation();
        AtomicBoolean otherThreadGotIn = new AtomicBoolean();
        CompletableFuture<Void> first = s.changeAfter(g);
        first.thenRun(() -> {
            // another thread must be able to use the signal while this dependent runs
            CountDownLatch read = new CountDownLatch(1);
            Thread t = new Thread(() -> {
                s.generation();
                s.changeAfter(s.generation());
                read.countDown();
            });
            t.start();
            try {
                otherThreadGotIn.set(read.await(10, TimeUnit.SECONDS)); // generous: a loaded machine
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        first.thenRun(() -> {
            throw new IllegalStateException("a dependent that fails");
        });
        CompletableFuture<Void> second = s.changeAfter(g);
        s.signal();
        assertTrue(otherThreadGotIn.get(), "the signal's lock was held while completing a stage");
        assertTrue(second.isDone(), "a failing dependent kept a stage from completing");
        s.close(); // ends the other thread's wait
    }

    @Test
    void underConcurrentSignalsNoWaiterMissesALaterChange() throws Exception {
        ChangeSignal s = new ChangeSignal();
        int waiters = 4;
        int rounds = 5_000;
        List<List<long[]>> seen = new ArrayList<>();
        List<List<CompletableFuture<Void>>> stages = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        AtomicLong signals = new AtomicLong();
        for (int w = 0; w < waiters; w++) {
            List<long[]> gens = new ArrayList<>();
            List<CompletableFuture<Void>> fs = new ArrayList<>();
            seen.add(gens);
            stages.add(fs);
            threads.add(new Thread(() -> {
                for (int i = 0; i < rounds; i++) {
                    long g = s.generation();
                    gens.add(new long[] {g});
                    fs.add(s.changeAfter(g));
                }
            }));
        }
        threads.add(new Thread(() -> {
            for (int i = 0; i < rounds; i++) {
                s.signal();
                signals.incrementAndGet();
            }
        }));
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            t.join(60_000); // generous: 2 shared cores
            assertFalse(t.isAlive(), "a thread did not end");
        }
        long last = s.generation();
        assertEquals(rounds, last);
        int pending = 0;
        for (int w = 0; w < waiters; w++) {
            for (int i = 0; i < rounds; i++) {
                long g = seen.get(w).get(i)[0];
                boolean done = stages.get(w).get(i).isDone();
                assertTrue(done || g == last, "a wait after generation " + g + " missed a later change (now " + last + ")");
                if (!done) {
                    pending++;
                }
            }
        }
        assertTrue(s.held() >= pending && s.held() <= waiters * rounds, "held " + s.held());
        s.close();
        assertEquals(0, s.held());
    }
}
