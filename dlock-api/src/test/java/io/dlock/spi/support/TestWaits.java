package io.dlock.spi.support;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.function.BooleanSupplier;

/** Polls a condition for the kit's tests. */
final class TestWaits {

    /** Generous: what is awaited takes milliseconds when it works, and a loaded machine may be slow. */
    private static final long LIMIT_MILLIS = 10_000;

    private TestWaits() { }

    static void until(String what, BooleanSupplier condition) {
        long end = System.nanoTime() + LIMIT_MILLIS * 1_000_000;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                fail("not within " + LIMIT_MILLIS + " ms: " + what);
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted while waiting until " + what);
            }
        }
    }
}
