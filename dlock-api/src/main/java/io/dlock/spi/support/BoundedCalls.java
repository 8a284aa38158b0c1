package io.dlock.spi.support;

import io.dlock.LockBackendException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A backend's calls to its client library, each ended by a {@link Deadline}, and waited for by the
 * interrupt rule. One per backend instance; thread-safe.
 *
 * <p><b>The interrupt rule</b> (rule 2 of {@link io.dlock.spi}): a backend call whose thread is
 * interrupted throws {@link LockBackendException} and leaves the thread's interrupt flag set; a
 * call whose answer is already in may return it instead, flag set. A wait never swallows an
 * interrupt, never turns it into a timeout, and never lets it stop a clean-up that must go out. The
 * core turns such a {@code LockBackendException} into the caller's {@link InterruptedException}.
 * Every wait here keeps the rule, in one of two ways chosen per call ({@link OnInterrupt}):
 * <ul>
 *   <li>{@link OnInterrupt#ABORT}: the interrupt ends the wait at once; the call is cancelled and
 *       {@link Failures#interrupted} is thrown, flag set. For calls whose outcome the caller may
 *       leave unknown: an acquire try (the core's {@code abandon()} undoes what it may have done),
 *       a read, a renewal.</li>
 *   <li>{@link OnInterrupt#FINISH}: the wait goes on until the answer or the deadline, and the flag
 *       is set again when it ends. For clean-ups that a thread must still send after it was
 *       interrupted (a release from a closing thread), and for calls short enough that answering
 *       them is as good as giving up.</li>
 * </ul>
 * A thread that is interrupted already when it calls in {@code ABORT} mode gets its answer only
 * if it is in at once; a backend that wants such a thread's call to run ({@code tryAcquire()} with
 * an interrupt pending) clears the flag first, waits with {@code FINISH} and sets it again.
 *
 * <p><b>What a wait may end with</b>: the answer; what the call threw, unchanged if unchecked
 * (for the backend's own mapping of its library's exceptions), else {@link Failures#failed};
 * {@link Failures#timedOut} at the deadline, the call cancelled ({@link Future#cancel(boolean)},
 * which stops the request where the client library passes cancellation on); {@link
 * Failures#interrupted} as above; {@link Failures#closed} once {@link #close()} ran, at once for
 * waits in progress too.
 *
 * <p>Two kinds of client library:
 * <ul>
 *   <li>asynchronous ones: the backend starts the request, {@link #track}s its future and
 *       {@link #await}s it. No thread of the kit's.</li>
 *   <li>blocking ones, whose own waits ignore or swallow interrupts (the JDK's URL connection
 *       ignores them; an SDK that enforces its timeout by interrupting its caller clears the
 *       flag): {@link #call} runs the request on one of the backend's call threads while the caller
 *       waits for it by the rule ({@link #start} sends several at once, to {@link #await} each). At most {@code maxThreads} calls run at once and
 *       {@code maxQueued} wait for a thread, whatever the number of locks and waiters; beyond that
 *       a call fails at once with {@link Failures#overloaded}. The threads exist while calls are
 *       made and end 10 s after the last one.</li>
 * </ul>
 * A backend whose calls block on the caller's thread with their own timeouts (sockets with a read
 * timeout) needs neither, as long as nothing it waits in swallows the interrupt.
 */
public final class BoundedCalls implements AutoCloseable {

    /** How a wait answers the caller's interrupt; see the class comment. */
    public enum OnInterrupt {
        /** The interrupt ends the wait at once: the call is cancelled, {@link Failures#interrupted} thrown, flag set. */
        ABORT,
        /** The wait goes on until the answer or the deadline; the flag is set again when it ends. */
        FINISH
    }

    /**
     * What a call is, for messages.
     *
     * @param backend the backend's name as messages start with it, e.g. {@code ZooKeeper}
     * @param operation what dlock is doing, e.g. {@code acquire} or {@code release}
     * @param lockName the lock concerned, or null
     */
    public record Call(String backend, String operation, String lockName) {

        /**
         * Checks the parts.
         *
         * @param backend the backend's name
         * @param operation what dlock is doing
         * @param lockName the lock, or null
         * @throws IllegalArgumentException if {@code backend} or {@code operation} is null or blank
         */
        public Call {
            if (backend == null || backend.isBlank()) {
                throw new IllegalArgumentException("backend must be a name, was " + backend);
            }
            if (operation == null || operation.isBlank()) {
                throw new IllegalArgumentException("operation must be a name, was " + operation);
            }
        }

        /** @return e.g. {@code the release of lock 'orders'}, or {@code the renewal} without a lock */
        public String describe() {
            return "the " + operation + (lockName == null ? "" : " of lock '" + lockName + "'");
        }
    }

    /**
     * The exceptions a backend throws for what the kit finds; each method returns the exception,
     * the kit throws it. The defaults are backend-neutral messages that start with the backend's
     * name; a backend overrides what it says differently (naming its servers, say) or types
     * differently (a subclass that its attempts catch). Must not throw.
     */
    public interface Failures {

        /** All defaults. */
        Failures DEFAULT = new Failures() { };

        /**
         * The call got no answer by its deadline; it has been cancelled.
         *
         * @param call the call
         * @param waited how long the caller waited
         * @return e.g. {@code etcd: the release of lock 'x' got no answer within 1000 ms}
         */
        default LockBackendException timedOut(Call call, Duration waited) {
            return new LockBackendException(call.backend() + ": " + call.describe() + " got no answer within "
                    + waited.toMillis() + " ms", call.lockName(), null);
        }

        /**
         * The caller was interrupted during an {@link OnInterrupt#ABORT} wait; the call has been
         * cancelled and the flag is set.
         *
         * @param call the call
         * @param cause the interrupt
         * @return e.g. {@code etcd: the acquire of lock 'x' was interrupted; its outcome is unknown}
         */
        default LockBackendException interrupted(Call call, InterruptedException cause) {
            return new LockBackendException(call.backend() + ": " + call.describe()
                    + " was interrupted; its outcome is unknown", call.lockName(), cause);
        }

        /**
         * The backend is closed: the call was refused, or its wait ended by {@link #close()}.
         *
         * @param call the call
         * @return e.g. {@code etcd: the release of lock 'x' failed: the lock client is closed}
         */
        default LockBackendException closed(Call call) {
            return new LockBackendException(call.backend() + ": " + call.describe()
                    + " failed: the lock client is closed", call.lockName(), null);
        }

        /**
         * A blocking call found every call thread busy and the queue full; it was not sent.
         *
         * @param call the call
         * @param threads the call threads
         * @param queued the calls that may wait for one
         * @return the exception, retryable
         */
        default LockBackendException overloaded(Call call, int threads, int queued) {
            return new LockBackendException(call.backend() + ": " + call.describe() + " was not sent: " + queued
                    + " calls of this client already wait for one of its " + threads + " call threads; try again later",
                    call.lockName(), null);
        }

        /**
         * The call failed with a checked exception, or was cancelled by someone else.
         *
         * @param call the call
         * @param cause what it threw
         * @return e.g. {@code etcd: the release of lock 'x' failed: java.io.IOException: ...}
         */
        default LockBackendException failed(Call call, Throwable cause) {
            return new LockBackendException(call.backend() + ": " + call.describe() + " failed: " + cause,
                    call.lockName(), cause);
        }
    }

    /** Fails the waits that {@link #close()} ends; never escapes (turned into {@link Failures#closed}). */
    private static final class Closed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Closed() {
            super("closed", null, false, false);
        }
    }

    private final String backend;
    private final Duration operationTimeout;
    private final Failures failures;
    private final ThreadPoolExecutor pool; // null without call threads
    private final int maxThreads;
    private final int maxQueued;
    private final Set<CompletableFuture<?>> pending = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private BoundedCalls(String backend, Duration operationTimeout, Failures failures, ThreadFactory threads,
                         int maxThreads, int maxQueued) {
        if (backend == null || backend.isBlank()) {
            throw new IllegalArgumentException("backend must be a name, was " + backend);
        }
        if (operationTimeout == null || operationTimeout.isNegative() || operationTimeout.isZero()) {
            throw new IllegalArgumentException("operationTimeout must be positive, was " + operationTimeout);
        }
        if (failures == null) {
            throw new IllegalArgumentException("failures must not be null");
        }
        this.backend = backend;
        this.operationTimeout = operationTimeout;
        this.failures = failures;
        this.maxThreads = maxThreads;
        this.maxQueued = maxQueued;
        if (threads == null) {
            this.pool = null;
        } else {
            this.pool = new ThreadPoolExecutor(maxThreads, maxThreads, 10, TimeUnit.SECONDS,
                    new LinkedBlockingQueue<>(maxQueued), threads);
            this.pool.allowCoreThreadTimeOut(true);
        }
    }

    /**
     * Makes the calls of a backend whose client library is asynchronous: {@link #track} and
     * {@link #await}; no thread of its own.
     *
     * @param backend the backend's name as messages start with it, e.g. {@code ZooKeeper}
     * @param operationTimeout the client's operation timeout, for {@link #deadline()}
     * @param failures the backend's exceptions, or {@link Failures#DEFAULT}
     * @return the calls
     * @throws IllegalArgumentException if an argument is null, {@code backend} blank or
     *     {@code operationTimeout} not positive
     */
    public static BoundedCalls forFutures(String backend, Duration operationTimeout, Failures failures) {
        return new BoundedCalls(backend, operationTimeout, failures, null, 0, 0);
    }

    /**
     * Makes the calls of a backend whose client library blocks: {@link #call} as well.
     *
     * @param backend the backend's name as messages start with it, e.g. {@code DynamoDB}
     * @param operationTimeout the client's operation timeout, for {@link #deadline()}
     * @param failures the backend's exceptions, or {@link Failures#DEFAULT}
     * @param threads makes the call threads (the client's factory, {@link io.dlock.spi.BackendContext#threadFactory()})
     * @param maxThreads how many calls run at once, 1 to 1024
     * @param maxQueued how many calls may wait for a thread, 1 to 1,000,000
     * @return the calls
     * @throws IllegalArgumentException if an argument is null or out of range, naming it
     */
    public static BoundedCalls withThreads(String backend, Duration operationTimeout, Failures failures,
                                           ThreadFactory threads, int maxThreads, int maxQueued) {
        if (threads == null) {
            throw new IllegalArgumentException("threads must not be null");
        }
        if (maxThreads < 1 || maxThreads > 1024) {
            throw new IllegalArgumentException("maxThreads must be 1 to 1024, was " + maxThreads);
        }
        if (maxQueued < 1 || maxQueued > 1_000_000) {
            throw new IllegalArgumentException("maxQueued must be 1 to 1000000, was " + maxQueued);
        }
        return new BoundedCalls(backend, operationTimeout, failures, threads, maxThreads, maxQueued);
    }

    /** @return the deadline of a call that starts now: one operation timeout away */
    public Deadline deadline() {
        return Deadline.after(operationTimeout);
    }

    /** @return the operation timeout */
    public Duration operationTimeout() {
        return operationTimeout;
    }

    /**
     * Tracks the future of a request the backend started, so that {@link #close()} fails it at
     * once; a future tracked after close is failed at once. A future stops being tracked when it
     * completes, or by {@link #forget}.
     *
     * @param future the request's future
     * @param <T> its answer
     * @return {@code future}
     * @throws IllegalArgumentException if {@code future} is null
     */
    public <T> CompletableFuture<T> track(CompletableFuture<T> future) {
        if (future == null) {
            throw new IllegalArgumentException("future must not be null");
        }
        if (closed) {
            future.completeExceptionally(new Closed());
            return future;
        }
        pending.add(future);
        future.whenComplete((r, t) -> pending.remove(future));
        if (closed) {
            future.completeExceptionally(new Closed()); // close() ran meanwhile and may have missed it
        }
        return future;
    }

    /**
     * Stops tracking a future nobody will wait for; its late answer is dropped.
     *
     * @param future a tracked future, or one no longer tracked (then nothing happens)
     */
    public void forget(Future<?> future) {
        Arguments.notNull("future", future);
        pending.remove(future);
    }

    /**
     * Waits for a request's answer by the interrupt rule, at most until the deadline.
     *
     * @param future the request's future, usually {@link #track}ed
     * @param deadline when to stop waiting
     * @param mode what the caller's interrupt does
     * @param operation what dlock is doing, for messages
     * @param lockName the lock, or null
     * @param <T> the answer
     * @return the answer
     * @throws RuntimeException what the request failed with, if unchecked
     * @throws LockBackendException from the backend's {@link Failures} otherwise (timed out,
     *     interrupted, closed, a checked failure)
     * @throws IllegalArgumentException if {@code future}, {@code deadline}, {@code mode} or
     *     {@code operation} is null
     */
    public <T> T await(CompletableFuture<T> future, Deadline deadline, OnInterrupt mode, String operation,
                       String lockName) {
        if (future == null || deadline == null || mode == null) {
            throw new IllegalArgumentException((future == null ? "future" : deadline == null ? "deadline" : "mode")
                    + " must not be null");
        }
        return await(future, deadline, mode, new Call(backend, operation, lockName));
    }

    /**
     * Runs a blocking request on one of the call threads and waits for it by the interrupt rule, at
     * most until the deadline: {@link #start} and {@link #await} in one. The request should keep to
     * the deadline itself too (its library's own timeouts): a request still running when the wait
     * ends is interrupted, but a library that ignores interrupts holds its thread until it returns.
     *
     * @param request the request
     * @param deadline when to stop waiting
     * @param mode what the caller's interrupt does
     * @param operation what dlock is doing, for messages
     * @param lockName the lock, or null
     * @param <T> the answer
     * @return what {@code request} returned
     * @throws RuntimeException what {@code request} threw, if unchecked
     * @throws LockBackendException from the backend's {@link Failures} otherwise (timed out,
     *     interrupted, closed, overloaded, a checked failure)
     * @throws IllegalArgumentException if {@code request}, {@code deadline}, {@code mode} or
     *     {@code operation} is null
     * @throws IllegalStateException if these calls were made by {@link #forFutures}, without threads
     */
    public <T> T call(Callable<T> request, Deadline deadline, OnInterrupt mode, String operation, String lockName) {
        if (deadline == null || mode == null) {
            throw new IllegalArgumentException((deadline == null ? "deadline" : "mode") + " must not be null");
        }
        return await(start(request, operation, lockName), deadline, mode, operation, lockName);
    }

    /**
     * Starts a blocking request on one of the call threads, for a backend that sends several at
     * once and then {@link #await}s each. The future is tracked; cancelling it (as a wait that ends
     * without the answer does) interrupts the request's thread, or drops the request if it has not
     * started.
     *
     * @param request the request
     * @param operation what dlock is doing, for messages
     * @param lockName the lock, or null
     * @param <T> the answer
     * @return the request's future: failed at once if the backend is closed
     * @throws LockBackendException from {@link Failures#overloaded} if every call thread is busy
     *     and the queue is full
     * @throws IllegalArgumentException if {@code request} or {@code operation} is null
     * @throws IllegalStateException if these calls were made by {@link #forFutures}, without threads
     */
    public <T> CompletableFuture<T> start(Callable<T> request, String operation, String lockName) {
        if (request == null) {
            throw new IllegalArgumentException("request must not be null");
        }
        Call call = new Call(backend, operation, lockName);
        if (pool == null) {
            throw new IllegalStateException("the calls of " + backend + " have no threads: made by forFutures");
        }
        CompletableFuture<T> result = track(new CompletableFuture<>());
        if (result.isDone()) {
            return result; // closed
        }
        Future<?> task;
        try {
            task = pool.submit(() -> {
                if (result.isDone()) {
                    return; // given up on while it waited for a thread
                }
                try {
                    result.complete(request.call());
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                }
            });
        } catch (RejectedExecutionException e) {
            pending.remove(result);
            if (closed || pool.isShutdown()) {
                result.completeExceptionally(new Closed());
                return result;
            }
            throw failures.overloaded(call, maxThreads, maxQueued);
        }
        result.whenComplete((r, t) -> {
            if (result.isCancelled()) {
                task.cancel(true); // the caller gave up: stop the request
            }
        });
        return result;
    }

    private <T> T await(CompletableFuture<T> future, Deadline deadline, OnInterrupt mode, Call call) {
        long waited = deadline.remainingNanos();
        boolean interrupted = false;
        try {
            while (true) {
                if (future.isDone()) {
                    return outcome(future, call);
                }
                long left = deadline.remainingNanos();
                if (left <= 0) {
                    drop(future);
                    if (future.isDone() && !future.isCancelled()) {
                        return outcome(future, call); // the answer came as the deadline passed
                    }
                    throw failures.timedOut(call, Duration.ofNanos(waited));
                }
                try {
                    future.get(left, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true; // the flag is set again in finally, whatever the mode
                    if (mode == OnInterrupt.ABORT) {
                        drop(future);
                        throw failures.interrupted(call, e);
                    }
                } catch (ExecutionException | CancellationException | TimeoutException e) {
                    // looked at in the next round
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void drop(CompletableFuture<?> future) {
        pending.remove(future);
        future.cancel(true); // for a started request, this interrupts its thread (see start)
    }

    private <T> T outcome(CompletableFuture<T> future, Call call) {
        try {
            return future.join();
        } catch (CancellationException e) {
            throw failures.failed(call, e);
        } catch (CompletionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            if (cause instanceof Closed) {
                throw failures.closed(call);
            }
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw failures.failed(call, cause);
        }
    }

    /** @return whether {@link #close()} ran */
    public boolean isClosed() {
        return closed;
    }

    /** @return how many tracked requests are pending, for tests and diagnostics */
    public int pending() {
        return pending.size();
    }

    /**
     * Fails every pending wait at once with {@link Failures#closed}, refuses later calls the same
     * way, and interrupts the requests still running on call threads (without waiting for them).
     * Idempotent; never throws.
     */
    @Override
    public void close() {
        closed = true;
        for (CompletableFuture<?> f : new ArrayList<>(pending)) {
            f.completeExceptionally(new Closed());
        }
        if (pool != null) {
            pool.shutdownNow();
        }
    }

    /**
     * Waits until a future is done or the deadline passes, not giving in to interrupts: an
     * interrupt that came before or during the wait is set again when it returns. For a backend's
     * own wait loops (several requests in flight, resent on failure); the answer is the caller's to
     * read.
     *
     * @param future the future
     * @param until when to stop waiting
     * @return whether the future is done
     * @throws IllegalArgumentException if an argument is null
     */
    public static boolean awaitUninterruptibly(Future<?> future, Deadline until) {
        if (future == null || until == null) {
            throw new IllegalArgumentException((future == null ? "future" : "until") + " must not be null");
        }
        // taken now, so that the wait does not depend on how the future's get treats a flag set before it
        boolean interrupted = Thread.interrupted();
        try {
            while (!future.isDone()) {
                long left = until.remainingNanos();
                if (left <= 0) {
                    return false;
                }
                try {
                    future.get(left, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException | CancellationException | TimeoutException e) {
                    // done, or looked at in the next round
                }
            }
            return true;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Sleeps until the deadline, not giving in to interrupts: an interrupt that came before or
     * during the sleep is set again when it returns. For pauses inside a call that must not be cut
     * short (between tries of a clean-up).
     *
     * @param until when to wake
     * @throws IllegalArgumentException if {@code until} is null
     */
    public static void sleepUninterruptibly(Deadline until) {
        if (until == null) {
            throw new IllegalArgumentException("until must not be null");
        }
        boolean interrupted = Thread.interrupted();
        try {
            for (long left = until.remainingNanos(); left > 0; left = until.remainingNanos()) {
                try {
                    TimeUnit.NANOSECONDS.sleep(left);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return "BoundedCalls{" + backend + (pool == null ? "" : ", " + maxThreads + " threads") + ", " + pending.size()
                + " pending" + (closed ? ", closed" : "") + "}";
    }
}
