package io.dlock.internal;

/**
 * Runs short tasks after a delay. The core's only timer; tests substitute one driven by a fake
 * ticker so that no test sleeps for timing the core itself decides.
 */
interface Scheduler {

    /** A scheduled task that can be cancelled. */
    interface Task {
        /** Cancels the task if it has not run. */
        void cancel();
    }

    /**
     * Schedules a task. Tasks must be short and must not block.
     *
     * @param task the task
     * @param delayNanos the delay; zero or negative runs it as soon as possible
     * @return a handle to cancel it
     */
    Task schedule(Runnable task, long delayNanos);

    /** Stops the scheduler; pending tasks are dropped. */
    void shutdown();
}
