package io.dlock.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * A {@link Scheduler} on a {@link ScheduledExecutorService}: the client's own one-thread timer, or
 * one the user supplied ({@link io.dlock.LockClientConfig.Builder#scheduler}). A supplied one is
 * never shut down: {@link #shutdown()} cancels this client's pending tasks on it, and tasks that
 * would still run do nothing.
 */
final class ExecutorScheduler implements Scheduler {

    private final ScheduledExecutorService executor;
    private final boolean owned;
    /** This client's pending tasks on a supplied executor, so that shutdown() can cancel them. */
    private final Set<ScheduledFuture<?>> pending = ConcurrentHashMap.newKeySet();
    private volatile boolean stopped;

    /** Makes the client's own timer: one daemon thread. */
    ExecutorScheduler(ThreadFactory threadFactory) {
        ScheduledThreadPoolExecutor own = new ScheduledThreadPoolExecutor(1, threadFactory);
        own.setRemoveOnCancelPolicy(true);
        own.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.executor = own;
        this.owned = true;
    }

    /** Schedules on the user's executor, which this scheduler never shuts down. */
    ExecutorScheduler(ScheduledExecutorService supplied) {
        this.executor = supplied;
        this.owned = false;
    }

    @Override
    public Task schedule(Runnable task, long delayNanos) {
        if (stopped) {
            return () -> { };
        }
        try {
            if (owned) {
                ScheduledFuture<?> f = executor.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
                return () -> f.cancel(false);
            }
            Tracked tracked = new Tracked(task);
            ScheduledFuture<?> f = executor.schedule(tracked, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
            tracked.track(f);
            return () -> {
                f.cancel(false);
                pending.remove(f);
            };
        } catch (RejectedExecutionException e) {
            return () -> { };
        }
    }

    /**
     * A task on a supplied executor, in {@link #pending} from when it is scheduled until it runs
     * or is cancelled, whichever of the scheduling thread and the running one comes second.
     */
    private final class Tracked implements Runnable {
        private final Runnable task;
        private volatile ScheduledFuture<?> future;
        private volatile boolean ran;

        Tracked(Runnable task) {
            this.task = task;
        }

        void track(ScheduledFuture<?> f) {
            future = f;
            pending.add(f);
            if (ran) {
                pending.remove(f);
            }
        }

        @Override
        public void run() {
            ran = true;
            ScheduledFuture<?> f = future;
            if (f != null) {
                pending.remove(f);
            }
            if (!stopped) {
                task.run();
            }
        }
    }

    @Override
    public void shutdown() {
        stopped = true;
        if (owned) {
            executor.shutdownNow();
            return;
        }
        for (ScheduledFuture<?> f : pending) {
            f.cancel(false);
        }
        pending.clear();
    }

    /**
     * Waits for the client's own timer thread to end; a supplied executor is not waited for.
     *
     * @return true if it ended (or is not the client's)
     */
    boolean awaitTermination(long nanos) throws InterruptedException {
        return !owned || executor.awaitTermination(nanos, TimeUnit.NANOSECONDS);
    }
}
