package io.dlock.dynamodb.internal;

import io.dlock.LockBackendException;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Runs SDK calls on the backend's own threads while the caller waits, so that the caller's
 * interrupt is neither lost nor mistaken for a timeout.
 *
 * <p>Why: the SDK enforces its API call timeout by interrupting the calling thread, and clears
 * the flag afterwards; the JDK's URL connection does not react to interrupts at all. A caller
 * interrupted during a call on its own thread would wait out the timeout and then find its
 * interrupt gone. Here the caller waits on a future: an interruptible call returns at once with
 * {@link Failures.Interrupted} (flag set again); a clean-up call (release) finishes first and then
 * restores the flag, because an interrupted thread that closes its lease must still free the lock.
 * Every wait is bounded by the call's timeout plus a short grace in which the SDK's own timeout
 * speaks first. Thread-safe.
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

    private final ThreadPoolExecutor pool;
    private final Failures failures;

    Calls(ThreadFactory threads, Failures failures) {
        // threads live while calls are made and end 10 s after the last one
        this.pool = new ThreadPoolExecutor(THREADS, THREADS, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(QUEUE), threads);
        this.pool.allowCoreThreadTimeOut(true);
        this.failures = failures;
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
        Future<T> future;
        try {
            future = pool.submit(body::get);
        } catch (RejectedExecutionException e) {
            if (pool.isShutdown()) {
                throw failures.closed(operation, lockName, e);
            }
            throw new LockBackendException("dynamodb: the " + operation + (lockName == null ? "" : " of lock '" + lockName + "'")
                    + " was not sent: " + QUEUE + " calls of this client already wait for one of its " + THREADS
                    + " call threads; try again later", lockName, e);
        }
        long deadline = System.nanoTime() + timeout.plus(GRACE).toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return future.get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    if (interruptible) {
                        future.cancel(true);
                        interrupted = true;
                        throw failures.interrupted(operation, lockName, e);
                    }
                    interrupted = true; // finish the clean-up first; the flag is restored below
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof RuntimeException re) {
                        throw re;
                    }
                    if (cause instanceof Error err) {
                        throw err;
                    }
                    throw new LockBackendException("the " + operation + " failed: " + cause, lockName, cause);
                } catch (TimeoutException e) {
                    future.cancel(true);
                    throw failures.timedOut(operation, lockName, timeout, e);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Stops the threads; calls in flight are interrupted and their callers told the backend is closed. */
    void close() {
        pool.shutdownNow();
    }
}
