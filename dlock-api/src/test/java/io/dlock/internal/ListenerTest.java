package io.dlock.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.AcquireOutcome;
import io.dlock.LockListener;
import io.dlock.LostReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The metrics hook: every event reported, and a listener that throws changes nothing. */
class ListenerTest {

    private static final Duration LEASE = Duration.ofSeconds(30);

    @Test
    void everyEventIsReported() throws InterruptedException {
        Fixture f = new Fixture();
        try {
            DefaultLease<?> a = f.acquire("a", LEASE, true);
            f.backend.grabAsOther("b", Duration.ofHours(1));
            f.client.lock("b").tryAcquire();
            f.scheduler.advance(Duration.ofSeconds(10)); // renewed
            f.backend.renewThrows = true;
            f.scheduler.advance(Duration.ofSeconds(10)); // renewal failed
            f.backend.renewThrows = false;
            a.release();
            DefaultLease<?> c = f.acquire("c", LEASE, false);
            f.scheduler.advance(LEASE); // lost

            assertEquals(AcquireOutcome.ACQUIRED, f.listener.finished.get(0).outcome());
            assertEquals(AcquireOutcome.CONTENDED, f.listener.finished.get(1).outcome());
            assertEquals("a", f.listener.renewed.get(0));
            assertEquals(1, f.listener.renewalFailed.size());
            assertEquals(1, f.listener.released.size());
            assertEquals(new RecordingListener.Lost("c", c.fencingToken(), LostReason.EXPIRED), f.listener.lost.get(0));
        } finally {
            f.close();
        }
    }

    @Test
    void aListenerThatThrowsChangesNothing() throws InterruptedException {
        AtomicInteger calls = new AtomicInteger();
        LockListener throwing = new LockListener() {
            private void boom() {
                calls.incrementAndGet();
                throw new IllegalStateException("metrics backend down");
            }

            @Override
            public void acquireFinished(String n, AcquireOutcome o, Duration w) {
                boom();
            }

            @Override
            public void released(String n, long t, Duration h) {
                boom();
            }

            @Override
            public void renewed(String n, long t) {
                boom();
            }

            @Override
            public void leaseLost(String n, long t, LostReason r) {
                boom();
            }
        };
        Fixture f = new Fixture(b -> b.listener(throwing));
        try {
            DefaultLease<?> a = f.acquire("a", LEASE, true);
            f.scheduler.advance(Duration.ofSeconds(10));
            assertTrue(a.isValid());
            assertEquals(1, f.backend.renewCalls.size());
            a.release();
            assertEquals(0, f.client.heldCount());
            DefaultLease<?> b = f.acquire("b", LEASE, false);
            f.scheduler.advance(LEASE);
            assertFalse(b.isValid());
            assertEquals(0, f.client.queue().size());
            assertTrue(calls.get() >= 5, "the listener was called " + calls.get() + " times");
        } finally {
            f.close();
        }
    }

    @Test
    void eachClientAsksTheListenerForOneBoundToItsProviderAndReportsToThat() throws InterruptedException {
        RecordingListener bound = new RecordingListener();
        List<String> asked = Collections.synchronizedList(new ArrayList<>());
        LockListener configured = new LockListener() {
            @Override
            public LockListener forClient(String providerName) {
                asked.add(providerName);
                return bound;
            }

            @Override
            public void acquireFinished(String lockName, AcquireOutcome outcome, Duration waited) {
                throw new AssertionError("events go to the listener forClient returned");
            }
        };
        Fixture f = new Fixture(b -> b.listener(configured));
        try {
            f.acquire("a", LEASE, false).release();
            assertEquals(List.of("fake"), asked);
            assertEquals(AcquireOutcome.ACQUIRED, bound.lastOutcome());
            assertEquals(1, bound.released.size());
            assertTrue(f.listener.finished.isEmpty());
        } finally {
            f.close();
        }
    }

    @Test
    void aListenerWhoseForClientThrowsOrAnswersNullIsUsedAsItIs() throws InterruptedException {
        for (boolean throwing : new boolean[] {true, false}) {
            RecordingListener events = new RecordingListener() {
                @Override
                public LockListener forClient(String providerName) {
                    if (throwing) {
                        throw new IllegalStateException("no registry");
                    }
                    return null;
                }
            };
            Fixture f = new Fixture(b -> b.listener(events));
            try {
                f.acquire("a", LEASE, false).release();
                assertEquals(AcquireOutcome.ACQUIRED, events.lastOutcome());
                assertEquals(1, events.released.size());
            } finally {
                f.close();
            }
        }
    }

    @Test
    void theDefaultForClientIsTheListenerItself() {
        RecordingListener l = new RecordingListener();
        assertSame(l, l.forClient("redis"));
        assertSame(LockListener.NONE, LockListener.NONE.forClient("etcd"));
    }
}
