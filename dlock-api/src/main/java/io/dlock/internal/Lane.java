package io.dlock.internal;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks on an executor, at most {@code width} at once, in the order they were given; the rest
 * wait in this lane's queue, not in the executor. This is how the client bounds what it hands an
 * executor (its own or the user's): however many locks and waiters there are, one kind of work
 * (asynchronous acquisitions' tries, listener notifications) occupies at most {@code width} of the
 * executor's threads, and leaves the others to the renewals.
 *
 * <p>If the executor rejects a task (it was shut down), the lane runs its queue on the thread that
 * gave it the task, as the client's other hand-offs do when it is closing.
 */
final class Lane implements Executor {

    private static final Logger LOG = LoggerFactory.getLogger(Lane.class);

    private final Executor executor;
    private final int width;
    private final Queue<Runnable> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger running = new AtomicInteger();

    /**
     * @param executor where the tasks run
     * @param width the most tasks of this lane running at once, positive
     */
    Lane(Executor executor, int width) {
        this.executor = executor;
        this.width = width;
    }

    @Override
    public void execute(Runnable task) {
        queue.add(task);
        startDrainer();
    }

    private void startDrainer() {
        while (!queue.isEmpty()) {
            int n = running.get();
            if (n >= width) {
                return; // a running drainer takes it
            }
            if (running.compareAndSet(n, n + 1)) {
                try {
                    executor.execute(this::drain);
                } catch (RejectedExecutionException e) {
                    drain();
                }
                return;
            }
        }
    }

    private void drain() {
        try {
            Runnable task;
            while ((task = queue.poll()) != null) {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    LOG.warn("dlock: a task of the client failed unexpectedly", e);
                }
            }
        } finally {
            running.decrementAndGet();
            startDrainer(); // one queued after the last poll, before the decrement
        }
    }

    /** @return the tasks waiting for a turn (for tests) */
    int queued() {
        return queue.size();
    }
}
