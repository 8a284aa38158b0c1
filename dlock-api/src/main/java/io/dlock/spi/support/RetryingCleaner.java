package io.dlock.spi.support;

import io.dlock.LockBackendException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps retrying, in the background, clean-ups that failed when they were first tried: the delete
 * of a grant whose answer was lost, of a queued entry an attempt left, of a lock whose release got
 * no answer, of a create that may land after its acquisition ended. While answers are being lost
 * the first try usually fails too, and what it should have deleted would then stay until the
 * server's expiry ends it (a lease time), or, on a backend whose client keeps its session or lease
 * alive, for as long as the client lives.
 *
 * <p>The backend keeps what to delete and how: it tries once itself (within its abandon budget,
 * {@link LeaseTimes#abandonBudget}), and {@link #submit}s a {@link Task} for what failed. The
 * cleaner only retries it:
 * <ul>
 *   <li><b>Backoff</b>: an entry is first tried when it is due (by default {@link
 *       Settings#firstDelay()} after the backend's own try), then again after {@code firstDelay},
 *       doubling up to {@link Settings#maxDelay()}; {@link #kick()} retries every entry now (a
 *       reconnection).</li>
 *   <li><b>Until</b>: the task answers {@link Outcome#DONE} (deleted, found gone, or made moot), or
 *       the entry's give-up time passes (after which the server's expiry has ended what it would
 *       delete), or {@link #forget} or {@link #close()}. A task that throws is retried (a
 *       {@link LockBackendException} is logged at DEBUG, anything else at WARN).</li>
 *   <li><b>Bounded</b>: at most {@link Settings#maxPending()} entries; past it {@link #submit}
 *       refuses (logged once at WARN, then at DEBUG), so an outage that fails many clean-ups cannot
 *       grow memory without bound. An entry submitted under the key of a pending one replaces it.</li>
 *   <li><b>Threads</b>: at most {@link Settings#threads()} of the backend's factory, started on
 *       need and ended 5 s after the last entry; each runs one task at a time, so a task should
 *       keep to a deadline of its own (a {@link BoundedCalls} call, a socket timeout).</li>
 *   <li><b>Close</b>: drops what is pending, interrupts running tasks and waits for them at most
 *       {@link Settings#closeWait()}.</li>
 * </ul>
 * Thread-safe; {@link #submit} never blocks on a task.
 */
public final class RetryingCleaner implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RetryingCleaner.class);

    /** What one try of a clean-up found. */
    public enum Outcome {
        /** Nothing is left to do: deleted, found gone, or made moot. */
        DONE,
        /** It failed or could not be tried now: try again after the backoff. */
        RETRY
    }

    /** One try of a clean-up; runs on a cleaner thread, and should keep to a deadline of its own. */
    @FunctionalInterface
    public interface Task {
        /**
         * Tries the clean-up once.
         *
         * @return whether anything is left to do; null counts as {@link Outcome#RETRY}
         */
        Outcome attempt();
    }

    /**
     * How a cleaner retries.
     *
     * @param maxPending the most entries waiting, 1 to 10,000,000
     * @param threads the most threads trying entries at once, 1 to 64
     * @param firstDelay the pause before the first retry, positive
     * @param maxDelay the longest pause between retries, at least {@code firstDelay}
     * @param closeWait how long {@link #close()} waits for running tasks, zero or positive
     */
    public record Settings(int maxPending, int threads, Duration firstDelay, Duration maxDelay, Duration closeWait) {

        /**
         * Checks the settings.
         *
         * @param maxPending the most entries waiting
         * @param threads the most threads
         * @param firstDelay the pause before the first retry
         * @param maxDelay the longest pause
         * @param closeWait how long close waits
         * @throws IllegalArgumentException naming the setting that is null or out of range
         */
        public Settings {
            if (maxPending < 1 || maxPending > 10_000_000) {
                throw new IllegalArgumentException("maxPending must be 1 to 10000000, was " + maxPending);
            }
            if (threads < 1 || threads > 64) {
                throw new IllegalArgumentException("threads must be 1 to 64, was " + threads);
            }
            if (firstDelay == null || firstDelay.isNegative() || firstDelay.isZero()) {
                throw new IllegalArgumentException("firstDelay must be positive, was " + firstDelay);
            }
            if (maxDelay == null || maxDelay.compareTo(firstDelay) < 0) {
                throw new IllegalArgumentException("maxDelay must be at least firstDelay " + firstDelay + ", was "
                        + maxDelay);
            }
            if (closeWait == null || closeWait.isNegative()) {
                throw new IllegalArgumentException("closeWait must be zero or positive, was " + closeWait);
            }
        }

        /** @return 1,024 entries, one thread, retries after 50 ms doubling to 1 s, 2 s to close */
        public static Settings defaults() {
            return new Settings(1024, 1, Duration.ofMillis(50), Duration.ofSeconds(1), Duration.ofSeconds(2));
        }

        /**
         * @param n the most entries waiting
         * @return these settings with {@code maxPending} changed
         * @throws IllegalArgumentException if out of range
         */
        public Settings withMaxPending(int n) {
            return new Settings(n, threads, firstDelay, maxDelay, closeWait);
        }

        /**
         * @param firstDelay the pause before the first retry
         * @param maxDelay the longest pause between retries
         * @return these settings with the delays changed
         * @throws IllegalArgumentException if null or out of range
         */
        public Settings withDelays(Duration firstDelay, Duration maxDelay) {
            return new Settings(maxPending, threads, firstDelay, maxDelay, closeWait);
        }

        /**
         * @param closeWait how long {@link #close()} waits for running tasks
         * @return these settings with {@code closeWait} changed
         * @throws IllegalArgumentException if null or negative
         */
        public Settings withCloseWait(Duration closeWait) {
            return new Settings(maxPending, threads, firstDelay, maxDelay, closeWait);
        }
    }

    /** One clean-up; its scheduling fields are guarded by {@link #lock}. */
    private static final class Entry {
        final Object key;
        final Task task;
        final Deadline giveUp;
        long delayNanos;
        boolean tried;
        boolean running;
        boolean kicked;
        ScheduledFuture<?> next;

        Entry(Object key, Task task, Deadline giveUp, long delayNanos) {
            this.key = key;
            this.task = task;
            this.giveUp = giveUp;
            this.delayNanos = delayNanos;
        }
    }

    private final String backend;
    private final Settings settings;
    private final ScheduledThreadPoolExecutor exec;
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<Object, Entry> entries = new HashMap<>(); // guarded by lock
    private boolean closed; // guarded by lock
    private boolean refusedBefore; // guarded by lock

    private RetryingCleaner(String backend, ThreadFactory threads, Settings settings) {
        this.backend = backend;
        this.settings = settings;
        this.exec = new ScheduledThreadPoolExecutor(settings.threads(), threads);
        exec.setKeepAliveTime(5, TimeUnit.SECONDS);
        exec.allowCoreThreadTimeOut(true);
        exec.setRemoveOnCancelPolicy(true);
        exec.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /**
     * Makes a cleaner; no thread runs until the first entry.
     *
     * @param backend the backend's name for logs, e.g. {@code etcd}
     * @param threads makes the cleaner's threads (the client's factory,
     *     {@link io.dlock.spi.BackendContext#threadFactory()})
     * @param settings how it retries, e.g. {@link Settings#defaults()}
     * @return the cleaner
     * @throws IllegalArgumentException if an argument is null, or {@code backend} blank
     */
    public static RetryingCleaner start(String backend, ThreadFactory threads, Settings settings) {
        if (backend == null || backend.isBlank()) {
            throw new IllegalArgumentException("backend must be a name, was " + backend);
        }
        if (threads == null) {
            throw new IllegalArgumentException("threads must not be null");
        }
        if (settings == null) {
            throw new IllegalArgumentException("settings must not be null");
        }
        return new RetryingCleaner(backend, threads, settings);
    }

    /**
     * Retries a clean-up, first after {@link Settings#firstDelay()}; see {@link #submit(Object,
     * Task, Duration, Duration)}.
     *
     * @param key names the clean-up (an entry under an equal key is replaced), e.g. a node's path
     * @param task one try
     * @param giveUpAfter how long from now to keep trying, zero or positive; saturated, so that
     *     {@code ChronoUnit.FOREVER.getDuration()} means until {@link #close()}
     * @return true if it is pending; false if the cleaner is closed or full
     * @throws IllegalArgumentException if an argument is null or {@code giveUpAfter} negative
     */
    public boolean submit(Object key, Task task, Duration giveUpAfter) {
        return submit(key, task, settings.firstDelay(), giveUpAfter);
    }

    /**
     * Retries a clean-up, first after {@code notBefore}, then with the backoff, until it is done or
     * {@code giveUpAfter} from now has passed.
     *
     * @param key names the clean-up (an entry under an equal key is replaced), e.g. a node's path
     * @param task one try
     * @param notBefore the pause before the first try, zero or positive
     * @param giveUpAfter how long from now to keep trying, zero or positive; saturated, so that
     *     {@code ChronoUnit.FOREVER.getDuration()} means until {@link #close()}
     * @return true if it is pending; false if the cleaner is closed or full
     * @throws IllegalArgumentException if an argument is null or a duration negative
     */
    public boolean submit(Object key, Task task, Duration notBefore, Duration giveUpAfter) {
        if (key == null || task == null) {
            throw new IllegalArgumentException((key == null ? "key" : "task") + " must not be null");
        }
        if (notBefore == null || notBefore.isNegative()) {
            throw new IllegalArgumentException("notBefore must be zero or positive, was " + notBefore);
        }
        if (giveUpAfter == null || giveUpAfter.isNegative()) {
            throw new IllegalArgumentException("giveUpAfter must be zero or positive, was " + giveUpAfter);
        }
        Entry e = new Entry(key, task, Deadline.after(giveUpAfter), LeaseTimes.saturatedNanos(settings.firstDelay()));
        lock.lock();
        try {
            if (closed) {
                return false;
            }
            Entry old = entries.get(key);
            if (old == null && entries.size() >= settings.maxPending()) {
                if (!refusedBefore) {
                    refusedBefore = true;
                    LOG.warn("dlock: {}: {} clean-ups already wait to be retried; {} is not retried (what it would "
                            + "delete ends by the server's expiry of its lease or session; further ones are logged at "
                            + "DEBUG)", backend, settings.maxPending(), key);
                } else {
                    LOG.debug("dlock: {}: the clean-up queue is full; {} is not retried", backend, key);
                }
                return false;
            }
            entries.put(key, e);
            if (old != null && old.next != null) {
                old.next.cancel(false); // a try of it already running finds itself replaced
            }
            schedule(e, LeaseTimes.saturatedNanos(notBefore));
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Drops a pending clean-up: what it would delete is gone, or in other hands. A try already
     * running finishes, and is not repeated.
     *
     * @param key the clean-up's key; nothing happens if none is pending
     */
    public void forget(Object key) {
        Arguments.notNull("key", key);
        lock.lock();
        try {
            Entry e = entries.remove(key);
            if (e != null && e.next != null) {
                e.next.cancel(false);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Retries every pending clean-up that was tried before now, with the backoff starting over:
     * for a backend that learns that its server is reachable again. Entries whose first try is
     * still to come keep their time.
     */
    public void kick() {
        lock.lock();
        try {
            for (Entry e : new ArrayList<>(entries.values())) {
                e.delayNanos = LeaseTimes.saturatedNanos(settings.firstDelay());
                if (e.running) {
                    e.kicked = true;
                } else if (e.tried && e.next != null && e.next.cancel(false)) {
                    schedule(e, 0);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** @return how many clean-ups are pending */
    public int pending() {
        lock.lock();
        try {
            return entries.size();
        } finally {
            lock.unlock();
        }
    }

    /** @return whether {@link #close()} ran */
    public boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    /** Schedules an entry's next try; the caller holds {@link #lock}. */
    private void schedule(Entry e, long delayNanos) {
        try {
            e.next = exec.schedule(() -> run(e), delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closing) {
            entries.remove(e.key, e);
        }
    }

    private void run(Entry e) {
        lock.lock();
        try {
            if (closed || entries.get(e.key) != e) {
                return; // forgotten or replaced
            }
            if (e.giveUp.expired()) {
                entries.remove(e.key);
                LOG.debug("dlock: {}: gave up retrying {}; it ends by the server's expiry", backend, e.key);
                return;
            }
            e.running = true;
            e.tried = true;
        } finally {
            lock.unlock();
        }
        Outcome outcome = Outcome.RETRY;
        try {
            Outcome o = e.task.attempt();
            outcome = o == null ? Outcome.RETRY : o;
        } catch (LockBackendException x) {
            LOG.debug("dlock: {}: retrying {} failed again: {}", backend, e.key, x.getMessage());
        } catch (RuntimeException x) {
            LOG.warn("dlock: {}: retrying {} failed unexpectedly", backend, e.key, x);
        }
        lock.lock();
        try {
            e.running = false;
            if (closed || entries.get(e.key) != e) {
                return;
            }
            if (outcome == Outcome.DONE) {
                entries.remove(e.key);
                LOG.debug("dlock: {}: {} done in the background", backend, e.key);
                return;
            }
            long delay = e.kicked ? 0 : e.delayNanos;
            e.kicked = false;
            e.delayNanos = Math.min(LeaseTimes.saturatedNanos(settings.maxDelay()), e.delayNanos * 2);
            schedule(e, delay);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Drops every pending clean-up (what they would delete ends by the server's expiry, or with the
     * session the backend is closing), interrupts running tries and waits for them at most
     * {@link Settings#closeWait()}. Idempotent; never throws; an interrupt ends the wait, flag set.
     */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            for (Entry e : entries.values()) {
                if (e.next != null) {
                    e.next.cancel(false);
                }
            }
            entries.clear();
        } finally {
            lock.unlock();
        }
        exec.shutdownNow();
        try {
            if (!exec.awaitTermination(LeaseTimes.saturatedNanos(settings.closeWait()), TimeUnit.NANOSECONDS)) {
                LOG.debug("dlock: {}: a clean-up still ran {} ms after close", backend, settings.closeWait().toMillis());
            }
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "RetryingCleaner{" + backend + ", " + pending() + " pending}";
    }
}
