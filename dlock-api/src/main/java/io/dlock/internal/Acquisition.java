package io.dlock.internal;

import io.dlock.AcquireOutcome;
import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockOptions;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.Grant;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One call of {@code acquire}, {@code tryAcquire} or {@code acquireAsync}: the acquire algorithm,
 * written once for every backend and for the blocking and the asynchronous API alike.
 *
 * <ol>
 *   <li>Join this client's local queue of the name ({@link LocalQueue}); only the slot's holder
 *       goes on to the server.</li>
 *   <li>With the slot: draw an owner id, make the backend's attempt, and try. On busy, stop if the
 *       deadline passed; else wait for the first of the attempt's {@link AcquireAttempt#turn turn}
 *       stage and a timer of {@code min(backoff, hint, deadline)}, and try again.</li>
 *   <li>Any end without a lease (deadline, cancel, interrupt, close, failure) abandons the attempt
 *       and passes the slot on.</li>
 * </ol>
 *
 * <p><b>No thread waits.</b> A waiting acquisition is a place in the local queue, or a pending
 * stage plus a timer task; the steps (a try and what follows it) run on the acquisition's
 * {@code executor}, dispatched by whatever ends the wait (the slot's hand-over, the stage, the
 * timer). An asynchronous acquisition's executor is the client's bounded lane; a blocking one's is
 * its caller: {@link #await()} blocks the caller on a queue of the steps handed to it and runs them
 * there, so the blocking API is this asynchronous one plus a block, and its tries still run on the
 * caller's thread (where an interrupt reaches them) as they always did.
 *
 * <p><b>Concurrency.</b> The phase is changed under {@link #lock}, which is never held while
 * calling the backend, the queue, an executor or a listener. Whoever moves the phase to
 * {@code TRYING} owns the step it dispatches; a wait's timer and stage race for the resume, and
 * only the one that finds the phase still {@code WAITING} for that wait (by its id) dispatches.
 * A stop (cancel, interrupt, the local deadline, close) ends a waiting acquisition at once, and
 * marks a trying one, whose step ends it after the try. The attempt's calls thus come one at a
 * time, each happening-before the next through the lock or the executor's hand-off.
 *
 * @param <S> the backend's per-grant state type
 */
final class Acquisition<S> {

    /** Why an acquisition ends before its own course ends it. */
    enum Stop {
        /** The caller cancelled the future. */
        CANCELLED,
        /** The blocking caller was interrupted. */
        INTERRUPTED,
        /** The deadline passed while waiting in the local queue. */
        DEADLINE,
        /** The client is closing. */
        CLOSED
    }

    private enum Phase { QUEUED, TRYING, WAITING, DONE }

    /** Wakes a blocking caller to look at the result. */
    private static final Runnable NOTHING = () -> { };

    private final DefaultLockClient client;
    private final BackendHandle<S> backend;
    private final String name;
    private final LockOptions options;
    /** Whether a caller blocks in {@link #await()} and runs the steps. */
    private final boolean blocking;
    private final LinkedBlockingQueue<Runnable> handoff;
    private final Executor executor;
    private final boolean forever;
    private final long waitNanos;
    private final long start;
    private final long deadline;
    /** The asynchronous caller's future; for a blocking caller, only the result's carrier. */
    private final CompletableFuture<Optional<Lease>> future = new CompletableFuture<>();

    private final ReentrantLock lock = new ReentrantLock();
    private Phase phase = Phase.QUEUED; // guarded by lock
    /** Whether a step runs now (TRYING and started), rather than waits in the executor to start. */
    private boolean stepRunning; // guarded by lock
    private Stop stop; // guarded by lock
    private long waitId; // guarded by lock
    private Scheduler.Task timer; // guarded by lock
    private LocalQueue.Waiter slot; // guarded by lock

    // owned by the step that runs (phase TRYING), handed from step to step through the lock
    private AcquireRequest request;
    private AcquireAttempt<S> attempt;
    private Backoff backoff;

    // the end, written once before `finished`
    private Optional<Lease> value = Optional.empty();
    private Throwable failure;
    private volatile boolean finished;
    /** Claimed by the one call of {@link #finish} that reports and delivers. */
    private final java.util.concurrent.atomic.AtomicBoolean ending = new java.util.concurrent.atomic.AtomicBoolean();

    private Acquisition(DefaultLockClient client, BackendHandle<S> backend, String name, LockOptions options,
                        boolean blocking, boolean forever, long waitNanos) {
        this.client = client;
        this.backend = backend;
        this.name = name;
        this.options = options;
        this.blocking = blocking;
        this.handoff = blocking ? new LinkedBlockingQueue<>() : null;
        this.executor = blocking ? handoff::add : client.acquireLane();
        this.forever = forever;
        this.waitNanos = waitNanos;
        this.start = client.ticker().nanoTime();
        this.deadline = forever ? 0 : start + Math.min(waitNanos, Long.MAX_VALUE / 4);
    }

    /** An acquisition whose caller blocks in {@link #await()}. */
    static Acquisition<?> blocking(DefaultLockClient client, String name, LockOptions options, boolean forever,
                                   long waitNanos) {
        return of(client.backendHandle(), client, name, options, true, forever, waitNanos);
    }

    /** An acquisition that completes {@link #future()}, started at once. */
    static Acquisition<?> async(DefaultLockClient client, String name, LockOptions options, long waitNanos) {
        Acquisition<?> a = of(client.backendHandle(), client, name, options, false, false, waitNanos);
        // a future completed by anyone but this acquisition (cancel, mostly) stops it
        a.future.whenComplete((r, t) -> a.stop(Stop.CANCELLED));
        a.start();
        return a;
    }

    private static <S> Acquisition<S> of(BackendHandle<S> backend, DefaultLockClient client, String name,
                                         LockOptions options, boolean blocking, boolean forever, long waitNanos) {
        return new Acquisition<>(client, backend, name, options, blocking, forever, waitNanos);
    }

    CompletableFuture<Optional<Lease>> future() {
        return future;
    }

    String name() {
        return name;
    }

    // ---- the caller's side ----

    /**
     * Starts, and runs the steps on the calling thread until the end.
     *
     * @return the lease, or empty at the deadline
     * @throws InterruptedException if the caller was interrupted while waiting (then nothing is
     *     held or queued for it any more)
     */
    Optional<Lease> await() throws InterruptedException {
        start();
        boolean interrupted = false;
        if ((forever || waitNanos > 0) && Thread.interrupted()) {
            interrupted = true; // a wait that would block: the interrupt ends it, as a blocking wait's would
            stop(Stop.INTERRUPTED);
        }
        while (!finished) {
            Runnable step = handoff.poll(); // work at hand runs whatever the interrupt flag says
            if (step == null) {
                try {
                    step = handoff.take();
                } catch (InterruptedException e) {
                    interrupted = true;
                    stop(Stop.INTERRUPTED);
                    continue;
                }
            }
            step.run();
        }
        Throwable t = failure;
        if (t instanceof InterruptedException) {
            throw (InterruptedException) t;
        }
        if (interrupted) {
            Thread.currentThread().interrupt(); // consumed, but the acquisition ended otherwise: keep it for the caller
        }
        if (t instanceof RuntimeException) {
            throw (RuntimeException) t;
        }
        if (t instanceof Error) {
            throw (Error) t;
        }
        if (t != null) {
            throw new IllegalStateException(t);
        }
        return value;
    }

    /** Joins the local queue: takes the slot and tries, or waits for it (with a deadline timer). */
    private void start() {
        client.acquisitionStarted(this);
        if (!forever && waitNanos == 0) {
            LocalQueue.Waiter w = client.queue().tryEnter(name);
            if (w == null) {
                lock.lock();
                try {
                    if (phase != Phase.QUEUED) {
                        return; // the client closed meanwhile
                    }
                    phase = Phase.DONE;
                } finally {
                    lock.unlock();
                }
                finish(AcquireOutcome.CONTENDED, Optional.empty(), null);
                return;
            }
            took(w);
            return;
        }
        took(client.queue().enter(name, this::slotPassed));
    }

    /**
     * Records the place in the queue, and tries now if it holds the slot: it was free, or was
     * passed to this waiter before the place was recorded ({@link #slotPassed()} then did nothing).
     */
    private void took(LocalQueue.Waiter w) {
        boolean leave = false;
        boolean tryNow = false;
        lock.lock();
        try {
            slot = w;
            if (phase == Phase.DONE) {
                leave = true; // stopped (the client closed) before it had its place
            } else if (w.holds()) {
                if (phase == Phase.QUEUED) {
                    phase = Phase.TRYING;
                    tryNow = true;
                }
            } else if (phase == Phase.QUEUED && !forever) {
                long left = deadline - client.ticker().nanoTime();
                timer = client.scheduler().schedule(this::localDeadline, left);
            }
        } finally {
            lock.unlock();
        }
        if (leave) {
            client.queue().leave(w);
        } else if (tryNow) {
            executor.execute(this::step);
        }
    }

    /** The slot passed to this waiter (on the thread that passed it). */
    private void slotPassed() {
        lock.lock();
        try {
            if (phase != Phase.QUEUED || slot == null) {
                // stopped: its leave() passes the slot on; or not yet recorded: took() sees it holds
                return;
            }
            phase = Phase.TRYING;
            cancelTimer();
        } finally {
            lock.unlock();
        }
        executor.execute(this::step);
    }

    /** The deadline timer of the local wait fired; the ticker may run differently from the timer. */
    private void localDeadline() {
        lock.lock();
        try {
            if (phase != Phase.QUEUED) {
                return;
            }
            long left = deadline - client.ticker().nanoTime();
            if (left > 0) {
                timer = client.scheduler().schedule(this::localDeadline, left);
                return;
            }
        } finally {
            lock.unlock();
        }
        stop(Stop.DEADLINE);
    }

    /**
     * Stops the acquisition: at once if it waits (in the local queue, or for its turn on the
     * server), else after the try in flight. Idempotent; the first reason wins.
     */
    void stop(Stop reason) {
        Phase was;
        LocalQueue.Waiter w;
        lock.lock();
        try {
            was = phase;
            if (was == Phase.DONE) {
                return;
            }
            if (stop == null) {
                stop = reason;
            }
            if (was == Phase.TRYING && stepRunning) {
                return; // the step ends it after the try
            }
            // waiting: in the local queue, for its turn, or for its next step to start (which then
            // finds it ended: a step the executor drops at close is not needed)
            phase = Phase.DONE;
            waitId++;
            cancelTimer();
            w = slot;
        } finally {
            lock.unlock();
        }
        if (was == Phase.QUEUED) {
            if (w != null) {
                client.queue().leave(w); // passes the slot on if it was handed to this waiter meanwhile
            }
            Stop s = reason;
            if (reason == Stop.CLOSED) {
                end(s); // close() ends waiters itself: their executor is about to stop
            } else {
                executor.execute(() -> end(s));
            }
            return;
        }
        // waiting with the slot: the attempt (if one was made) may hold a place on the server
        if (reason == Stop.CLOSED) {
            // close() sends the abandon with its releases, under its deadline
            if (attempt != null) {
                client.abandonAtClose(attempt);
                client.attemptEnded(request.ownerId());
                attempt = null;
            }
            releaseSlot();
            end(reason);
        } else {
            executor.execute(() -> {
                if (attempt != null) {
                    DefaultLockClient.abandon(attempt);
                    client.attemptEnded(request.ownerId());
                    attempt = null;
                }
                releaseSlot();
                end(reason);
            });
        }
    }

    // ---- the steps, on the executor ----

    /** Tries until a grant, a wait, or an end. Runs with the phase TRYING, which it owns. */
    private void step() {
        Stop s;
        lock.lock();
        try {
            if (phase != Phase.TRYING) {
                return; // ended while this step waited to start
            }
            stepRunning = true;
            s = stop;
        } finally {
            lock.unlock();
        }
        if (s == null && client.isClosed()) {
            s = Stop.CLOSED; // closing: close() ends this one too; nothing more goes to the server
        }
        if (s != null) {
            stopAfterTry(s);
            return;
        }
        try {
            if (attempt == null) {
                begin();
            }
            while (true) {
                client.ensureOpen();
                long sentAt = client.ticker().nanoTime();
                AttemptResult<S> result = attempt.tryOnce();
                if (result instanceof AttemptResult.Granted<S> granted) {
                    granted(granted, sentAt);
                    return;
                }
                if (!(result instanceof AttemptResult.Busy<S> busy)) {
                    throw new IllegalStateException("the backend's attempt answered " + result
                            + " (tryOnce must answer granted or busy)");
                }
                long now = client.ticker().nanoTime();
                if (!forever && now - deadline >= 0) {
                    endWithoutLease(waitNanos == 0 ? AcquireOutcome.CONTENDED : AcquireOutcome.TIMED_OUT, null);
                    return;
                }
                if (blocking && Thread.interrupted()) {
                    stopAfterTry(Stop.INTERRUPTED); // the caller was interrupted during the try
                    return;
                }
                s = currentStop();
                if (s != null) {
                    stopAfterTry(s);
                    return;
                }
                long pause = pause(busy, now);
                if (pause <= 0) {
                    continue;
                }
                CompletionStage<Void> stage = attempt.turn(Duration.ofNanos(pause));
                if (stage == null) {
                    throw new IllegalStateException("the backend's attempt answered a null turn stage");
                }
                if (isDone(stage)) {
                    continue; // worth trying now: no hand-off, no stack growing with the tries
                }
                long id;
                lock.lock();
                try {
                    s = stop;
                    if (s == null) {
                        phase = Phase.WAITING;
                        stepRunning = false;
                        id = ++waitId;
                        long thisWait = id;
                        timer = client.scheduler().schedule(() -> resume(thisWait), pause);
                    } else {
                        id = 0;
                    }
                } finally {
                    lock.unlock();
                }
                if (s != null) {
                    stopAfterTry(s);
                    return;
                }
                stage.whenComplete((v, t) -> resume(id));
                return;
            }
        } catch (LockBackendException e) {
            failed(e);
        } catch (RuntimeException | Error e) {
            crashed(e);
        }
    }

    /** The wait with this id ended (its stage completed, or its timer fired): try again. */
    private void resume(long id) {
        lock.lock();
        try {
            if (phase != Phase.WAITING || waitId != id) {
                return; // the other of stage and timer won, or the acquisition stopped
            }
            phase = Phase.TRYING;
            cancelTimer();
        } finally {
            lock.unlock();
        }
        executor.execute(this::step);
    }

    private void begin() {
        client.checkLeaseTime(options.leaseTime());
        AcquireRequest r = new AcquireRequest(name, io.dlock.spi.support.Ids.ownerId(), options.leaseTime());
        client.attemptStarted(r.ownerId());
        try {
            attempt = backend.backend().newAttempt(r);
        } catch (RuntimeException e) {
            client.attemptEnded(r.ownerId());
            throw e;
        }
        request = r;
        backoff = new Backoff(client.config().retryBase(), client.config().retryCap(), ThreadLocalRandom.current());
    }

    /** @return the pause before the next try: the backoff, bounded by the deadline and the busy answer's hint */
    private long pause(AttemptResult.Busy<S> busy, long now) {
        long pause = backoff.nextNanos();
        if (!forever) {
            pause = Math.min(pause, deadline - now);
        }
        Optional<Duration> hint = busy.retryAfter();
        if (hint.isPresent()) {
            pause = Math.min(pause, Checks.saturatedNanos(hint.get()) + 1_000_000L);
        }
        return Math.max(0, pause);
    }

    private void granted(AttemptResult.Granted<S> granted, long sentAt) {
        LocalQueue.Waiter w = slotOf();
        DefaultLease<S> lease = new DefaultLease<>(client, backend, Grant.of(request, granted), options,
                granted.validFrom(sentAt), w);
        lock.lock();
        try {
            phase = Phase.DONE;
        } finally {
            lock.unlock();
        }
        // the slot now belongs to the lease. Reported as acquired even when register() finds the
        // client closed and releases the lease at once: that release is reported too, so every
        // ACQUIRED has its released or lost event (a held-locks gauge stays exact)
        try {
            client.register(lease);
        } catch (RuntimeException e) {
            finish(AcquireOutcome.ACQUIRED, Optional.empty(), e);
            return;
        }
        finish(AcquireOutcome.ACQUIRED, Optional.of(lease), null);
    }

    /** Ends after a try because of a stop: abandons, frees the slot, reports. */
    private void stopAfterTry(Stop s) {
        // the clean-up must reach the server even when an interrupt (or a cancel) is why we give up
        leave(false);
        end(s);
    }

    /**
     * Marks the acquisition done, abandons its attempt (here, or in the background after a backend
     * failure, whose clean-up may not answer in time either) and frees the local slot.
     */
    private void leave(boolean abandonInBackground) {
        lock.lock();
        try {
            phase = Phase.DONE;
        } finally {
            lock.unlock();
        }
        if (attempt != null) {
            if (abandonInBackground) {
                client.abandonInBackground(attempt);
            } else {
                DefaultLockClient.abandon(attempt);
            }
            client.attemptEnded(request.ownerId());
            attempt = null;
        }
        releaseSlot();
    }

    /** Ends at the deadline, or after an unexpected exception: abandons here, frees the slot, reports. */
    private void endWithoutLease(AcquireOutcome outcome, Throwable t) {
        leave(false);
        finish(outcome, Optional.empty(), t);
    }

    /**
     * A backend call failed: the caller gets the failure now and the clean-up runs in the
     * background, since the backend did not answer within the operation timeout and its clean-up
     * may not either.
     */
    private void failed(LockBackendException e) {
        leave(true);
        Stop s = currentStop();
        if (blocking && Thread.interrupted()) {
            // the call failed because the thread was interrupted (or while it was): report the interrupt
            InterruptedException interrupted = new InterruptedException("interrupted while acquiring lock '" + name + "'");
            interrupted.addSuppressed(e);
            finish(AcquireOutcome.INTERRUPTED, Optional.empty(), interrupted);
        } else if (s == Stop.CANCELLED) {
            finish(AcquireOutcome.CANCELLED, Optional.empty(), e);
        } else if (s == Stop.CLOSED) {
            IllegalStateException closed = closedWhileWaiting();
            closed.addSuppressed(e);
            finish(AcquireOutcome.FAILED, Optional.empty(), closed);
        } else {
            finish(AcquireOutcome.FAILED, Optional.empty(), e);
        }
    }

    private void crashed(Throwable t) {
        endWithoutLease(AcquireOutcome.FAILED, t);
    }

    /** Ends because of a stop, with nothing held on the server any more and the slot freed. */
    private void end(Stop s) {
        switch (s) {
            case CANCELLED:
                finish(AcquireOutcome.CANCELLED, Optional.empty(),
                        new CancellationException("acquisition of lock '" + name + "' was cancelled"));
                break;
            case INTERRUPTED:
                finish(AcquireOutcome.INTERRUPTED, Optional.empty(),
                        new InterruptedException("interrupted while waiting for lock '" + name + "'"));
                break;
            case DEADLINE:
                finish(AcquireOutcome.TIMED_OUT, Optional.empty(), null);
                break;
            default:
                finish(AcquireOutcome.FAILED, Optional.empty(), closedWhileWaiting());
                break;
        }
    }

    private IllegalStateException closedWhileWaiting() {
        return new IllegalStateException("the lock client was closed while waiting for lock '" + name + "'");
    }

    /**
     * Reports the outcome and hands the result to the caller; the last thing an acquisition does.
     * Only the first call does so ({@link #abortAtClose()} may have ended it meanwhile); a lease
     * that comes too late is released.
     */
    private void finish(AcquireOutcome outcome, Optional<Lease> lease, Throwable t) {
        if (!ending.compareAndSet(false, true)) {
            lease.ifPresent(l -> DefaultDistributedLock.withoutInterrupt(l::release));
            return;
        }
        client.acquisitionEnded(this);
        client.listener().acquireFinished(name, outcome, Duration.ofNanos(client.ticker().nanoTime() - start));
        value = lease;
        failure = t;
        finished = true;
        if (blocking) {
            handoff.add(NOTHING);
            return;
        }
        boolean delivered = t == null ? future.complete(lease) : future.completeExceptionally(t);
        if (!delivered && lease.isPresent()) {
            // cancelled meanwhile: strand nothing
            DefaultDistributedLock.withoutInterrupt(lease.get()::release);
        }
    }

    /**
     * For close(), after the client's executors stopped: an asynchronous acquisition that has not
     * ended yet (its next step was dropped with the executor's queue) ends now, so its future
     * never hangs. A blocking one ends on its caller's thread, which runs what is handed to it.
     */
    void abortAtClose() {
        if (!blocking && !finished) {
            lock.lock();
            try {
                phase = Phase.DONE;
            } finally {
                lock.unlock();
            }
            finish(AcquireOutcome.FAILED, Optional.empty(), closedWhileWaiting());
        }
    }

    private void releaseSlot() {
        LocalQueue.Waiter w = slotOf();
        if (w != null) {
            client.queue().release(w);
        }
    }

    private LocalQueue.Waiter slotOf() {
        lock.lock();
        try {
            return slot;
        } finally {
            lock.unlock();
        }
    }

    private Stop currentStop() {
        lock.lock();
        try {
            return stop;
        } finally {
            lock.unlock();
        }
    }

    private void cancelTimer() { // with lock held
        if (timer != null) {
            timer.cancel();
            timer = null;
        }
    }

    private static boolean isDone(CompletionStage<?> stage) {
        if (stage instanceof CompletableFuture<?> f) {
            return f.isDone();
        }
        try {
            return stage.toCompletableFuture().isDone();
        } catch (UnsupportedOperationException e) {
            return false;
        }
    }

    @Override
    public String toString() {
        return "Acquisition{" + name + "}";
    }
}
