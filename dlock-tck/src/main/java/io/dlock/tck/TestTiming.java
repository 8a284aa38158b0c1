package io.dlock.tck;

import io.dlock.spi.support.Arguments;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.function.Executable;

/**
 * Small timing helpers for backend tests against real servers: wait for a condition, sleep with
 * the interrupt kept, and check that a call fails within a bound (never a hang). Shared by every
 * backend module's tests, so that each bound reads the same way. Thread-safe (stateless).
 */
public final class TestTiming {

    private TestTiming() { }

    /**
     * Polls a condition every 10 ms until it holds, or fails the test when the timeout passes.
     *
     * @param what what is awaited, for the failure message
     * @param timeout how long to wait at most
     * @param condition the condition
     */
    public static void await(String what, Duration timeout, BooleanSupplier condition) {
        Arguments.notNull("what", what);
        Arguments.notNull("timeout", timeout);
        Arguments.notNull("condition", condition);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out after " + timeout + " waiting until " + what);
            }
            sleep(10);
        }
    }

    /**
     * Sleeps; an interrupt restores the flag and fails the test.
     *
     * @param millis how long, in milliseconds
     */
    public static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /**
     * Runs something that must throw {@code type} within {@code bound}.
     *
     * @param type the expected exception type
     * @param bound the longest the call may take before it throws
     * @param body the call
     * @param <T> the exception type
     * @return the exception
     */
    public static <T extends Throwable> T assertThrowsWithin(Class<T> type, Duration bound, Executable body) {
        Arguments.notNull("type", type);
        Arguments.notNull("bound", bound);
        Arguments.notNull("body", body);
        long start = System.nanoTime();
        Throwable thrown = null;
        try {
            body.execute();
        } catch (Throwable t) {
            thrown = t;
        }
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        if (thrown == null) {
            fail("expected " + type.getSimpleName() + " but nothing was thrown (took " + tookMillis + " ms)");
        }
        if (!type.isInstance(thrown)) {
            throw new AssertionError("expected " + type.getSimpleName() + " but got " + thrown, thrown);
        }
        assertTrue(tookMillis <= bound.toMillis(), "expected the failure within " + bound.toMillis()
                + " ms but it took " + tookMillis + " ms: " + thrown);
        return type.cast(thrown);
    }
}
