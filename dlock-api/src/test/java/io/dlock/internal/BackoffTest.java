package io.dlock.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Random;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class BackoffTest {

    private static long expectedCeiling(long base, long cap, int n) {
        BigInteger c = BigInteger.valueOf(base).shiftLeft(n);
        return c.min(BigInteger.valueOf(cap)).longValueExact();
    }

    @Test
    void fullJitterWithinZeroAndTheCeiling() {
        long base = Duration.ofMillis(20).toNanos();
        long cap = Duration.ofSeconds(1).toNanos();
        Backoff b = new Backoff(Duration.ofMillis(20), Duration.ofSeconds(1), new SplittableRandom(42));
        for (int n = 0; n < 200; n++) {
            long ceiling = expectedCeiling(base, cap, n);
            assertEquals(ceiling, b.ceilingNanos(), "ceiling of pause " + n);
            long pause = b.nextNanos();
            assertTrue(pause >= 0 && pause <= ceiling, "pause " + n + " = " + pause + " outside [0, " + ceiling + "]");
        }
    }

    @Test
    void theJitterSpreadsOverTheWholeRange() {
        long cap = Duration.ofMillis(100).toNanos();
        long min = Long.MAX_VALUE;
        long max = 0;
        long sum = 0;
        int samples = 2000;
        for (int i = 0; i < samples; i++) {
            Backoff b = new Backoff(Duration.ofMillis(100), Duration.ofMillis(100), new Random(i));
            long p = b.nextNanos();
            min = Math.min(min, p);
            max = Math.max(max, p);
            sum += p;
        }
        assertTrue(min < cap / 20, "never near zero: " + min);
        assertTrue(max > cap - cap / 20, "never near the ceiling: " + max);
        long mean = sum / samples;
        assertTrue(Math.abs(mean - cap / 2) < cap / 10, "not uniform: mean " + mean);
    }

    @Test
    void neverOverflowsForLargeAttemptCounts() {
        long[] bases = {1, 3, Duration.ofMillis(20).toNanos(), Duration.ofDays(1).toNanos()};
        Duration[] caps = {Duration.ofSeconds(1), Duration.ofDays(3650), ChronoUnit.FOREVER.getDuration()};
        for (long base : bases) {
            for (Duration capD : caps) {
                long cap = Math.max(base, Checks.saturatedNanos(capD));
                Backoff b = new Backoff(Duration.ofNanos(base), capD, new SplittableRandom(7));
                for (int n = 0; n < 300; n++) {
                    long ceiling = expectedCeiling(base, cap, n);
                    assertEquals(ceiling, b.ceilingNanos(), "base " + base + " cap " + capD + " attempt " + n);
                    long pause = b.nextNanos();
                    assertTrue(pause >= 0 && pause <= ceiling,
                            "base " + base + " cap " + capD + " attempt " + n + ": " + pause);
                }
            }
        }
    }

    @Test
    void resetStartsOverFromTheBase() {
        Backoff b = new Backoff(Duration.ofMillis(10), Duration.ofSeconds(10), new SplittableRandom(1));
        for (int i = 0; i < 5; i++) {
            b.nextNanos();
        }
        assertEquals(Duration.ofMillis(320).toNanos(), b.ceilingNanos());
        b.reset();
        assertEquals(Duration.ofMillis(10).toNanos(), b.ceilingNanos());
    }

    @Test
    void aCapBelowTheBaseIsRaisedToTheBase() {
        Backoff b = new Backoff(Duration.ofMillis(50), Duration.ofMillis(10), new SplittableRandom(1));
        assertEquals(Duration.ofMillis(50).toNanos(), b.ceilingNanos());
        b.nextNanos();
        assertEquals(Duration.ofMillis(50).toNanos(), b.ceilingNanos());
    }

    @Test
    void theSameSeedGivesTheSamePauses() {
        Backoff a = new Backoff(Duration.ofMillis(20), Duration.ofSeconds(1), new SplittableRandom(99));
        Backoff b = new Backoff(Duration.ofMillis(20), Duration.ofSeconds(1), new SplittableRandom(99));
        for (int i = 0; i < 50; i++) {
            assertEquals(a.nextNanos(), b.nextNanos());
        }
    }
}
