package io.dlock.dynamodb.internal;

import io.dlock.LockBackendException;
import io.dlock.spi.support.BoundedCalls;
import io.dlock.spi.support.BoundedCalls.OnInterrupt;
import io.dlock.spi.support.Deadline;
import java.time.Duration;
import java.util.concurrent.ThreadFactory;
import java.util.function.Supplier;

/**
 * Runs SDK calls on the backend's own threads while the caller waits (the support kit's
 * {@link BoundedCalls#call}), so that the caller's interrupt is neither lost nor mistaken for a
 * timeout.
 *
 * <p>Why: the SDK enforces its API call timeout by interrupting the calling thread, and clears
 * the flag afterwards; the JDK's URL connection does not react to interrupts at all. A caller
 * interrupted during a call on its own thread would wait out the timeout and then find its
 * interrupt gone. Here the caller waits on a future: an interruptible call returns at once with
 * {@link Failures.Interrupted} (flag set again; {@link OnInterrupt#ABORT}); a clean-up call
 * (release) finishes first and then restores the flag ({@link OnInterrupt#FINISH}), because an
 * interrupted thread that closes its lease must still free the lock. What stays here is
 * DynamoDB's: every wait is bounded by the call's timeout plus a short grace in which the SDK's
 * own timeout speaks first (its message says more), and the number of call threads. Thread-safe.
 */
final class Calls {

    /** How long past its timeout a call may take before the caller stops waiting for the SDK to give up. */
    static final Duration GRACE = Duration.ofMillis(100);

    /**
     * How many SDK calls run at once, whatever the number of locks and waiters: more wait their
     * turn, within their own timeout. The core sends one attempt per lock name at a time, so a
     * busy client has about one call in flight per lock it contends on, plus renewals.
     */
    static final int THREADS = 16;
    /** How many calls may wait for a thread; past that a call fails at once as a retryable overload. */
    static final int QUEUE = 4096;

    private final BoundedCalls calls;

    Calls(ThreadFactory threads, Failures failures, Duration operationTimeout) {
        this.calls = BoundedCalls.withThreads("DynamoDB", operationTimeout, failures, threads, THREADS, QUEUE);
    }

    /**
     * Runs one call.
     *
     * @param operation what dlock is doing, for messages
     * @param lockName the lock, or null
     * @param timeout the call's timeout (the SDK's API call timeout for it)
     * @param interruptible whether the caller's interrupt ends the wait at once
     * @param body the SDK call; its exceptions reach the caller unchanged
     * @return what the call returned
     * @throws software.amazon.awssdk.core.exception.SdkException what the call threw
     * @throws LockBackendException if the wait was interrupted ({@link Failures.Interrupted}), ran
     *     past the timeout, or the backend is closed
     */
    <T> T run(String operation, String lockName, Duration timeout, boolean interruptible, Supplier<T> body) {
        Deadline deadline = Deadline.at(Deadline.after(timeout).nanoTime() + GRACE.toNanos());
        return calls.call(body::get, deadline, interruptible ? OnInterrupt.ABORT : OnInterrupt.FINISH, operation,
                lockName);
    }

    /** Stops the threads; calls in flight are interrupted and their callers told the backend is closed. */
    void close() {
        calls.close();
    }
}
