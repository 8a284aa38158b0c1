package io.dlock.redis.internal;

import io.dlock.LockBackendException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * One request sent to several Redlock nodes at once, each on its node's own small executor, and
 * the answers as they come in. The caller waits only until the answers it has decide the outcome
 * (a majority granted, say) or the deadline, so a frozen or slow minority node does not hold up a
 * majority answer; the calls still under way finish on their own, each within its budget, and an
 * optional callback on the node's thread takes care of what a late answer means (an undo, a retry
 * in the background). Thread-safe.
 */
final class RedlockFanOut {

    /** A node's call: returns the script's reply or throws {@link LockBackendException} within the budget. */
    interface NodeCall {
        Object call(int node, long budgetNanos);
    }

    /** What to do on the node's thread once its answer is recorded: a reply, or the failure. */
    interface AfterAnswer {
        void answered(int node, Object replyOrFailure);
    }

    /** The answer of a node that has not answered yet. */
    static final Object PENDING = new Object();
    /** The reply of a node whose script answered nil (scripts never do; for completeness). */
    private static final Object NIL = new Object();

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final Object[] answers; // guarded by lock: PENDING, a reply, NIL, or a LockBackendException
    private int pending; // guarded by lock

    private RedlockFanOut(int nodes) {
        answers = new Object[nodes];
        java.util.Arrays.fill(answers, PENDING);
    }

    /**
     * Sends a call to some nodes.
     *
     * @param executors each node's executor, by node index
     * @param which the nodes to call; the others stay {@link #PENDING} and do not count as pending
     * @param call the call
     * @param deadline the {@link System#nanoTime()} by which every call ends
     * @param after run on the node's thread after its answer is recorded, or null
     * @return the fan-out, with the calls under way
     */
    static RedlockFanOut start(Executor[] executors, boolean[] which, NodeCall call, long deadline, AfterAnswer after) {
        RedlockFanOut f = new RedlockFanOut(executors.length);
        for (int i = 0; i < executors.length; i++) {
            if (which[i]) {
                f.pending++;
            }
        }
        for (int i = 0; i < executors.length; i++) {
            if (!which[i]) {
                continue;
            }
            int node = i;
            Runnable task = () -> {
                Object answer;
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    answer = new LockBackendException("no time was left to send the call", null, null);
                } else {
                    try {
                        Object reply = call.call(node, left);
                        answer = reply == null ? NIL : reply;
                    } catch (LockBackendException e) {
                        answer = e;
                    } catch (RuntimeException e) {
                        answer = new LockBackendException("the call failed: " + e, null, e);
                    }
                }
                f.record(node, answer);
                if (after != null) {
                    after.answered(node, answer == NIL ? null : answer);
                }
            };
            try {
                executors[i].execute(task);
            } catch (RejectedExecutionException e) {
                LockBackendException closed = new LockBackendException("the client is closed", null, e);
                f.record(node, closed);
                if (after != null) {
                    after.answered(node, closed);
                }
            }
        }
        return f;
    }

    private void record(int node, Object answer) {
        lock.lock();
        try {
            answers[node] = answer;
            pending--;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until every called node answered, {@code decided} holds for the answers so far, or the
     * deadline passes.
     *
     * @param decided tested on a snapshot (see {@link #snapshot()}) under the fan-out's lock
     * @param deadline a {@link System#nanoTime()} reading
     * @param what the operation, for the interrupt's message
     * @param lockName the lock, or null
     * @return a snapshot of the answers
     * @throws LockBackendException if the thread was interrupted (the flag stays set)
     */
    Object[] await(Predicate<Object[]> decided, long deadline, String what, String lockName) {
        lock.lock();
        try {
            while (pending > 0 && !decided.test(snapshot())) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    changed.awaitNanos(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new LockBackendException("the " + what + (lockName == null ? "" : " of lock '" + lockName
                            + "'") + " was interrupted while it waited for the Redlock nodes' answers", lockName, e);
                }
            }
            return snapshot();
        } finally {
            lock.unlock();
        }
    }

    /**
     * @return the answers now, by node: {@link #PENDING}, a reply ({@code null} for nil) or a
     *     {@link LockBackendException}
     */
    Object[] snapshot() {
        lock.lock();
        try {
            Object[] copy = answers.clone();
            for (int i = 0; i < copy.length; i++) {
                if (copy[i] == NIL) {
                    copy[i] = null;
                }
            }
            return copy;
        } finally {
            lock.unlock();
        }
    }
}
