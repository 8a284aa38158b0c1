package io.dlock.internal;

import io.dlock.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A ticker that moves only when a test moves it. Never goes backwards. */
public final class FakeTicker implements Ticker {

    private final AtomicLong now;

    public FakeTicker() {
        this(7_000_000_000L);
    }

    public FakeTicker(long start) {
        this.now = new AtomicLong(start);
    }

    @Override
    public long nanoTime() {
        return now.get();
    }

    public void advance(Duration d) {
        advanceNanos(d.toNanos());
    }

    public void advanceNanos(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("a ticker never goes backwards: " + nanos);
        }
        now.addAndGet(nanos);
    }

    /** Moves to {@code target} if that is later than now (wrap-safe); never moves back. */
    public void advanceTo(long target) {
        now.updateAndGet(n -> target - n > 0 ? target : n);
    }
}
