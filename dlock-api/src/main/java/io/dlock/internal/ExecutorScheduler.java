package io.dlock.internal;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/** A {@link Scheduler} on one daemon thread. */
final class ExecutorScheduler implements Scheduler {

    private final ScheduledThreadPoolExecutor executor;

    ExecutorScheduler(ThreadFactory threadFactory) {
        executor = new ScheduledThreadPoolExecutor(1, threadFactory);
        executor.setRemoveOnCancelPolicy(true);
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    @Override
    public Task schedule(Runnable task, long delayNanos) {
        try {
            ScheduledFuture<?> f = executor.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
            return () -> f.cancel(false);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            return () -> { };
        }
    }

    @Override
    public void shutdown() {
        executor.shutdownNow();
    }

    boolean awaitTermination(long nanos) throws InterruptedException {
        return executor.awaitTermination(nanos, TimeUnit.NANOSECONDS);
    }
}
