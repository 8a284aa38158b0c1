package io.dlock.redis.internal;

import io.dlock.spi.AcquireRequest;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps trying, in the background, to undo grants whose answer was lost when the first try to
 * undo them failed too: while answers are being lost, that try usually fails as well (a new
 * connection's set-up is never answered), and the grant would then stay held until its lease
 * ends. One daemon thread, started on first need and stopped by {@link #close()}; each try is one
 * bounded call. A grant is given up on once its lease time has passed since the first failure: by
 * then the server has let it expire, unless it ran the request later still (a paused server), in
 * which case its own lease ends it. Thread-safe.
 */
final class BackgroundAbandon implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(BackgroundAbandon.class);
    private static final long FIRST_RETRY_MILLIS = 50;
    private static final long MAX_RETRY_MILLIS = 1000;
    /**
     * How long close() waits for the thread to stop; a try in flight is interrupted and bounded by
     * the backend's clean-up budget, and one still running after this ends with the client anyway.
     */
    private static final long CLOSE_WAIT_MILLIS = 2000;
    /**
     * The most grants waiting to be undone: past it, a new one is left to expire on the server
     * (within its lease time), so an outage that fails many acquisitions cannot grow the queue.
     */
    static final int MAX_PENDING = 1024;

    private final java.util.concurrent.atomic.AtomicInteger pending = new java.util.concurrent.atomic.AtomicInteger();

    private final ThreadFactory threads;
    private final Predicate<AcquireRequest> tryOnce;
    private ScheduledThreadPoolExecutor executor; // guarded by this
    private boolean closed; // guarded by this

    /**
     * @param threads makes the one background thread
     * @param tryOnce one bounded try to undo a grant: true if the server answered, false if not
     */
    BackgroundAbandon(ThreadFactory threads, Predicate<AcquireRequest> tryOnce) {
        this.threads = threads;
        this.tryOnce = tryOnce;
    }

    /**
     * Keeps trying to undo a grant, for at most its lease time from now.
     *
     * @param request the attempt whose grant may be held
     */
    void add(AcquireRequest request) {
        if (pending.incrementAndGet() > MAX_PENDING) {
            pending.decrementAndGet();
            LOG.debug("dlock: {} grants already wait to be undone; a possible grant of lock '{}' ends by expiry",
                    MAX_PENDING, request.name());
            return;
        }
        schedule(request, System.nanoTime() + request.leaseTime().toNanos(), FIRST_RETRY_MILLIS);
    }

    private void schedule(AcquireRequest request, long until, long delayMillis) {
        ScheduledThreadPoolExecutor e;
        synchronized (this) {
            if (closed) {
                pending.decrementAndGet();
                return;
            }
            if (executor == null) {
                executor = new ScheduledThreadPoolExecutor(1, threads);
                executor.setRemoveOnCancelPolicy(true);
            }
            e = executor;
        }
        try {
            e.schedule(() -> retry(request, until, delayMillis), delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
            pending.decrementAndGet(); // closed meanwhile: the grant ends by expiry
        }
    }

    private void retry(AcquireRequest request, long until, long delayMillis) {
        if (tryOnce.test(request)) {
            pending.decrementAndGet();
            LOG.debug("dlock: undid a possible grant of lock '{}' in the background", request.name());
            return;
        }
        if (System.nanoTime() - until >= 0) {
            pending.decrementAndGet();
            LOG.debug("dlock: gave up undoing a possible grant of lock '{}'; it ends by expiry", request.name());
            return;
        }
        schedule(request, until, Math.min(MAX_RETRY_MILLIS, delayMillis * 2));
    }

    /** Stops the thread; pending undos are dropped (those grants end by expiry). Never throws. */
    @Override
    public void close() {
        ScheduledThreadPoolExecutor e;
        synchronized (this) {
            closed = true;
            e = executor;
        }
        if (e == null) {
            return;
        }
        e.shutdownNow();
        try {
            if (!e.awaitTermination(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                LOG.debug("dlock: the background undo thread did not stop within {} ms", CLOSE_WAIT_MILLIS);
            }
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
