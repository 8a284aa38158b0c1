package io.dlock.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link Scheduler} whose tasks run only when the test advances its {@link FakeTicker}: on the
 * test's thread, in due order, with the ticker set to each task's due time while it runs. A task
 * that schedules another task due at or before the target time runs in the same advance. A
 * runaway (the core rescheduling itself without time passing) fails the test instead of hanging.
 */
final class ManualScheduler implements Scheduler {

    /** More tasks than this in one advance is a busy loop in the code under test. */
    static final int RUNAWAY = 100_000;

    private static final class Entry {
        final Runnable task;
        final long due;
        final long seq;
        volatile boolean cancelled;

        Entry(Runnable task, long due, long seq) {
            this.task = task;
            this.due = due;
            this.seq = seq;
        }
    }

    private final FakeTicker ticker;
    private final List<Entry> entries = new ArrayList<>(); // guarded by this
    private long seq; // guarded by this
    private boolean shutdown; // guarded by this
    private int ran; // guarded by this

    ManualScheduler(FakeTicker ticker) {
        this.ticker = ticker;
    }

    @Override
    public synchronized Task schedule(Runnable task, long delayNanos) {
        if (shutdown) {
            return () -> { };
        }
        long now = ticker.nanoTime();
        long delay = Math.max(0, delayNanos);
        long due = now + delay;
        if (due - now < 0) { // overflow: effectively never
            due = now + Long.MAX_VALUE;
        }
        Entry e = new Entry(task, due, seq++);
        entries.add(e);
        return () -> {
            e.cancelled = true;
            synchronized (ManualScheduler.this) {
                entries.remove(e);
            }
        };
    }

    @Override
    public synchronized void shutdown() {
        shutdown = true;
        entries.clear();
    }

    /** Advances the ticker by {@code d}, running every task that falls due on the way. */
    void advance(Duration d) {
        long target = ticker.nanoTime() + d.toNanos();
        runUntil(target);
        ticker.advanceTo(target);
    }

    /** Runs the tasks already due, without moving time. */
    void runDue() {
        runUntil(ticker.nanoTime());
    }

    private void runUntil(long target) {
        int count = 0;
        while (true) {
            Entry next;
            synchronized (this) {
                next = null;
                for (Entry e : entries) {
                    if (e.due - target > 0) {
                        continue;
                    }
                    if (next == null || e.due - next.due < 0 || (e.due == next.due && e.seq < next.seq)) {
                        next = e;
                    }
                }
                if (next == null) {
                    return;
                }
                entries.remove(next);
            }
            if (next.cancelled) {
                continue;
            }
            if (++count > RUNAWAY) {
                throw new AssertionError("scheduler runaway: more than " + RUNAWAY
                        + " tasks ran without the time reaching the target; the core reschedules in a busy loop");
            }
            ticker.advanceTo(next.due);
            next.task.run();
            synchronized (this) {
                ran++;
            }
        }
    }

    /** @return the number of tasks waiting (not cancelled) */
    synchronized int pending() {
        return (int) entries.stream().filter(e -> !e.cancelled).count();
    }

    /** @return how many tasks have run so far */
    synchronized int ran() {
        return ran;
    }
}
