package io.dlock.internal;

import io.dlock.AcquireOutcome;
import io.dlock.DistributedLock;
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
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The acquire algorithm, once for every backend: take the local slot (arrival order among this
 * client's threads), then attempt on the server, waiting between attempts with jittered
 * exponential backoff that a backend's notification cuts short, until a grant or the deadline.
 * Whatever path leaves without a lease abandons the attempt, so nothing stays held or queued.
 */
final class DefaultDistributedLock implements DistributedLock {

    private final DefaultLockClient client;
    private final String name;
    private final LockOptions options;

    DefaultDistributedLock(DefaultLockClient client, String name, LockOptions options) {
        this.client = client;
        this.name = name;
        this.options = options;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public LockOptions options() {
        return options;
    }

    @Override
    public Optional<Lease> tryAcquire() {
        try {
            return acquire(false, 0, () -> false);
        } catch (InterruptedException e) {
            // a zero wait never blocks; keep the caller's interrupt for the caller
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    @Override
    public Optional<Lease> tryAcquire(Duration maxWait) throws InterruptedException {
        Checks.nonNegative("maxWait", maxWait);
        return acquire(false, Checks.saturatedNanos(maxWait), () -> false);
    }

    @Override
    public Lease acquire() throws InterruptedException {
        return acquire(true, Long.MAX_VALUE, () -> false).orElseThrow(
                () -> new IllegalStateException("an unbounded wait ended without a lease"));
    }

    @Override
    public CompletableFuture<Optional<Lease>> acquireAsync(Duration maxWait) {
        Checks.nonNegative("maxWait", maxWait);
        client.ensureOpen();
        long waitNanos = Checks.saturatedNanos(maxWait);
        CompletableFuture<Optional<Lease>> future = new CompletableFuture<>();
        AtomicBoolean cancelled = new AtomicBoolean();
        Future<?> task;
        try {
            task = client.asyncAcquires().submit(() -> {
                try {
                    Optional<Lease> lease = acquire(false, waitNanos, cancelled::get);
                    if (!future.complete(lease) && lease.isPresent()) {
                        // cancelled meanwhile: strand nothing. The cancellation interrupted this
                        // thread, which would make an interruptible backend fail the release.
                        withoutInterrupt(lease.get()::release);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    future.completeExceptionally(client.isClosed()
                            ? new IllegalStateException("the lock client was closed while waiting")
                            : new CancellationException("acquisition of lock '" + name + "' was cancelled"));
                } catch (Throwable t) {
                    future.completeExceptionally(t);
                }
            });
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("the lock client is closed", e);
        }
        future.whenComplete((r, t) -> {
            if (future.isCancelled()) {
                cancelled.set(true);
                task.cancel(true);
            }
        });
        return future;
    }

    @Override
    public boolean withLock(Duration maxWait, Consumer<? super Lease> action) throws InterruptedException {
        Checks.nonNegative("maxWait", maxWait);
        Checks.notNull("action", action);
        Optional<Lease> lease = tryAcquire(maxWait);
        if (lease.isEmpty()) {
            return false;
        }
        try (Lease l = lease.get()) {
            action.accept(l);
        }
        return true;
    }

    private Optional<Lease> acquire(boolean forever, long waitNanos, java.util.function.BooleanSupplier cancelled)
            throws InterruptedException {
        client.ensureOpen();
        long start = client.ticker().nanoTime();
        long deadline = forever ? 0 : start + Math.min(waitNanos, Long.MAX_VALUE / 4);
        LocalQueue.Slot slot = client.queue().enter(name);
        boolean permit = false;
        boolean handedOver = false;
        AcquireOutcome outcome = AcquireOutcome.FAILED;
        try {
            permit = takePermit(slot, forever, waitNanos, deadline);
            if (!permit) {
                outcome = waitNanos == 0 ? AcquireOutcome.CONTENDED : AcquireOutcome.TIMED_OUT;
                return Optional.empty();
            }
            Optional<? extends DefaultLease<?>> lease = attemptUntilGranted(client.backendHandle(), slot, forever, deadline);
            if (lease.isPresent()) {
                handedOver = true;
                // reported as acquired even when register() finds the client closed and releases
                // the lease at once: that release is reported too, so every ACQUIRED has its
                // released or lost event (a held-locks gauge stays exact)
                outcome = AcquireOutcome.ACQUIRED;
                client.register(lease.get());
                return Optional.of(lease.get());
            }
            outcome = waitNanos == 0 ? AcquireOutcome.CONTENDED : AcquireOutcome.TIMED_OUT;
            return Optional.empty();
        } catch (InterruptedException e) {
            outcome = cancelled.getAsBoolean() ? AcquireOutcome.CANCELLED : AcquireOutcome.INTERRUPTED;
            throw e;
        } catch (LockBackendException e) {
            if (Thread.interrupted()) {
                // the call failed because the thread was interrupted (or while it was): report the interrupt
                outcome = cancelled.getAsBoolean() ? AcquireOutcome.CANCELLED : AcquireOutcome.INTERRUPTED;
                InterruptedException interrupted = new InterruptedException(
                        "interrupted while acquiring lock '" + name + "'");
                interrupted.addSuppressed(e);
                throw interrupted;
            }
            outcome = AcquireOutcome.FAILED;
            throw e;
        } finally {
            if (!handedOver) {
                if (permit) {
                    slot.permit.release();
                }
                client.queue().exit(name);
            }
            client.listener().acquireFinished(name, outcome, Duration.ofNanos(client.ticker().nanoTime() - start));
        }
    }

    /**
     * Attempts on the server until a grant or the deadline; whatever path leaves without a grant
     * abandons the attempt. Generic in the backend's state type, captured once in the handle, so
     * the grant reaches the lease, and later the backend, with no cast.
     *
     * @return the lease, not yet registered; empty at the deadline
     */
    private <S> Optional<DefaultLease<S>> attemptUntilGranted(BackendHandle<S> backend, LocalQueue.Slot slot,
                                                              boolean forever, long deadline)
            throws InterruptedException {
        client.checkLeaseTime(options.leaseTime());
        AcquireRequest request = new AcquireRequest(name, io.dlock.spi.support.Ids.ownerId(), options.leaseTime());
        client.attemptStarted(request.ownerId());
        boolean granted = false;
        boolean failed = false;
        AcquireAttempt<S> attempt;
        try {
            attempt = backend.backend().newAttempt(request);
        } catch (RuntimeException e) {
            client.attemptEnded(request.ownerId());
            throw e;
        }
        try {
            Backoff backoff = new Backoff(client.config().retryBase(), client.config().retryCap(),
                    ThreadLocalRandom.current());
            while (true) {
                client.ensureOpen();
                long sentAt = client.ticker().nanoTime();
                AttemptResult<S> result = attempt.tryOnce();
                if (result instanceof AttemptResult.Granted<S> grantedResult) {
                    DefaultLease<S> lease = new DefaultLease<>(client, backend, Grant.of(request, grantedResult),
                            options, grantedResult.validFrom(sentAt), slot);
                    granted = true;
                    return Optional.of(lease);
                }
                if (!(result instanceof AttemptResult.Busy<S> busy)) {
                    throw new IllegalStateException("the backend's attempt answered " + result
                            + " (tryOnce must answer granted or busy)");
                }
                long now = client.ticker().nanoTime();
                if (!forever && now - deadline >= 0) {
                    return Optional.empty();
                }
                long pause = backoff.nextNanos();
                if (!forever) {
                    pause = Math.min(pause, deadline - now);
                }
                Optional<Duration> hint = busy.retryAfter();
                if (hint.isPresent()) {
                    pause = Math.min(pause, Checks.saturatedNanos(hint.get()) + 1_000_000L);
                }
                attempt.awaitTurn(Duration.ofNanos(Math.max(0, pause)));
            }
        } catch (LockBackendException e) {
            failed = true;
            throw e;
        } finally {
            if (failed) {
                // the backend did not answer within the operation timeout, and its clean-up may not
                // either: the caller gets the failure now, the clean-up runs in the background
                client.abandonInBackground(attempt);
                client.attemptEnded(request.ownerId());
            } else if (!granted) {
                // the clean-up must reach the server even when an interrupt (or a cancel) is why we
                // give up
                DefaultLockClient.abandon(attempt);
                client.attemptEnded(request.ownerId());
            }
        }
    }

    /** Runs clean-up I/O with the interrupt flag cleared, and restores the flag afterwards. */
    static void withoutInterrupt(Runnable cleanup) {
        boolean interrupted = Thread.interrupted();
        try {
            cleanup.run();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Waits for this client's local slot of the name, in arrival order. The wait is one
     * uninterrupted stay in the fair semaphore's queue: leaving and re-joining it (to poll for
     * close, say) would put a waiter behind every later arrival. {@link DefaultLockClient#close()}
     * wakes the waiters instead ({@link LocalQueue#wakeAll()}), and the caller then finds the
     * client closed.
     */
    private boolean takePermit(LocalQueue.Slot slot, boolean forever, long waitNanos, long deadline)
            throws InterruptedException {
        if (waitNanos == 0 && !forever) {
            return slot.permit.tryAcquire();
        }
        client.ensureOpen();
        if (forever) {
            slot.permit.acquire();
            return true;
        }
        while (true) {
            long left = deadline - client.ticker().nanoTime();
            if (left <= 0) {
                return slot.permit.tryAcquire();
            }
            if (slot.permit.tryAcquire(left, TimeUnit.NANOSECONDS)) {
                return true;
            }
            // the semaphore waits on System.nanoTime; look again if the ticker disagrees
        }
    }

    @Override
    public String toString() {
        return "DistributedLock{" + name + "}";
    }
}
