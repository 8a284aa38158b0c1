package io.dlock.spi.support;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A generation counter that waiters can wait on without a thread: what a backend's waiting
 * attempts share to learn that something changed (a release notice, a lost or restored
 * connection) after what their last try saw.
 *
 * <p>The pattern: before a try, read {@link #generation()}; if the try finds the lock busy, wait
 * for {@link #changeAfter(long) changeAfter(seen)}. The stage completes at the first
 * {@link #signal()} after that read, so a change that happened while the try was on its way is
 * not lost (the stage is then complete at once). Whoever learns of a change (a notification's
 * callback, a connection's reader) calls {@code signal()}; {@link #close()} ends every wait, for
 * good. The signal knows nothing of any transport: subscribing, listening and reconnecting stay in
 * the backend.
 *
 * <p><b>Failure behaviour:</b> nothing here throws (every {@code long} is a generation that may
 * have been seen, so there is no bad argument). Stages are only ever completed normally; a
 * dependent of one stage that throws fails its own stage, not the others nor the caller of
 * {@code signal()}.
 *
 * <p><b>Concurrency:</b> thread-safe. The state is guarded by one lock, never held while a stage
 * is completed: {@code signal()} and {@code close()} complete the stages on the calling thread
 * after releasing it, so a dependent may read the generation or wait again at once. No thread of
 * its own. Memory is bounded by the stages still waiting: a waiter that gives up completes its
 * own stage (the signal never does it for it, and completing it early is harmless), and completed
 * stages are dropped at the next {@code changeAfter}, so a waiter that asks again and again does
 * not gather them.
 */
public final class ChangeSignal implements AutoCloseable {

    private final ReentrantLock lock = new ReentrantLock();
    private long generation; // guarded by lock
    private boolean closed; // guarded by lock
    private final List<CompletableFuture<Void>> waiters = new ArrayList<>(); // guarded by lock

    /** Makes a signal at generation 0, open, with nobody waiting. */
    public ChangeSignal() { }

    /**
     * The current generation: raised by one at every {@link #signal()} (and at {@link #close()}).
     *
     * @return the generation, to pass to {@link #changeAfter(long)} later
     */
    public long generation() {
        lock.lock();
        try {
            return generation;
        } finally {
            lock.unlock();
        }
    }

    /**
     * A stage that completes at the first change after generation {@code seen}.
     *
     * @param seen a generation read earlier from {@link #generation()}
     * @return a new stage: complete already if the generation is no longer {@code seen} (a change
     *     came since) or the signal is closed; otherwise completed by the next {@link #signal()}
     *     or {@link #close()}. The caller may complete it itself to give up waiting
     */
    public CompletableFuture<Void> changeAfter(long seen) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        lock.lock();
        try {
            if (!closed && generation == seen) {
                waiters.removeIf(CompletableFuture::isDone); // stages their waiters have given up on
                waiters.add(f);
                return f;
            }
        } finally {
            lock.unlock();
        }
        f.complete(null);
        return f;
    }

    /**
     * Records a change: raises the generation and completes every waiting stage, on this thread,
     * after releasing the lock. Does nothing once closed. Never throws.
     */
    public void signal() {
        List<CompletableFuture<Void>> woken;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            generation++;
            woken = take();
        } finally {
            lock.unlock();
        }
        complete(woken);
    }

    /**
     * Ends every wait for good: raises the generation once more, completes every waiting stage, and
     * from then on {@link #changeAfter(long)} returns a complete stage. Idempotent; never throws.
     */
    @Override
    public void close() {
        List<CompletableFuture<Void>> woken;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            generation++;
            woken = take();
        } finally {
            lock.unlock();
        }
        complete(woken);
    }

    /**
     * Whether {@link #close()} was called.
     *
     * @return {@code true} once closed
     */
    public boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * How many stages are held, for tests of boundedness: the stages waiting, and any completed by
     * their waiters but not yet dropped (the next {@link #changeAfter(long)} drops them).
     *
     * @return the number of stages held
     */
    public int held() {
        lock.lock();
        try {
            return waiters.size();
        } finally {
            lock.unlock();
        }
    }

    // with lock held
    private List<CompletableFuture<Void>> take() {
        List<CompletableFuture<Void>> out = new ArrayList<>(waiters);
        waiters.clear();
        return out;
    }

    private static void complete(List<CompletableFuture<Void>> stages) {
        for (CompletableFuture<Void> f : stages) {
            f.complete(null); // a dependent's exception goes to its own stage, never here
        }
    }

    @Override
    public String toString() {
        lock.lock();
        try {
            return "ChangeSignal{generation=" + generation + (closed ? ", closed" : "") + ", held=" + waiters.size() + "}";
        } finally {
            lock.unlock();
        }
    }
}
