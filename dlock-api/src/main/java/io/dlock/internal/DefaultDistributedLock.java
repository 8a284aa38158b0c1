package io.dlock.internal;

import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * A lock handle: argument checks, then one {@link Acquisition} per call, which runs the acquire
 * algorithm for every backend and both APIs. The blocking calls block their caller on it (and run
 * its tries on the caller's thread); {@link #acquireAsync} blocks nobody.
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
            return acquire(false, 0);
        } catch (InterruptedException e) {
            // a zero wait never blocks; keep the caller's interrupt for the caller
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    @Override
    public Optional<Lease> tryAcquire(Duration maxWait) throws InterruptedException {
        Checks.nonNegative("maxWait", maxWait);
        return acquire(false, Checks.saturatedNanos(maxWait));
    }

    @Override
    public Lease acquire() throws InterruptedException {
        return acquire(true, Long.MAX_VALUE).orElseThrow(
                () -> new IllegalStateException("an unbounded wait ended without a lease"));
    }

    @Override
    public CompletableFuture<Optional<Lease>> acquireAsync(Duration maxWait) {
        Checks.nonNegative("maxWait", maxWait);
        client.ensureOpen();
        return Acquisition.async(client, name, options, Checks.saturatedNanos(maxWait)).future();
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

    private Optional<Lease> acquire(boolean forever, long waitNanos) throws InterruptedException {
        client.ensureOpen();
        return Acquisition.blocking(client, name, options, forever, waitNanos).await();
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

    @Override
    public String toString() {
        return "DistributedLock{" + name + "}";
    }
}
