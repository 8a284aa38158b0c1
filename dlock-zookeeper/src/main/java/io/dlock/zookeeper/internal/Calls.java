package io.dlock.zookeeper.internal;

import io.dlock.LockBackendException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;

/**
 * Runs Curator operations in the background and waits for their answers with a deadline of our
 * own, so that no call outlasts the operation timeout whatever the network does (a foreground
 * ZooKeeper call only fails when the client gives up on the connection, after two thirds of the
 * session timeout). Waits are uninterruptible but restore the interrupt flag; {@link #close()}
 * fails every pending wait at once.
 */
final class Calls {

    /** Starts one background operation with the given callback. */
    @FunctionalInterface
    interface Op {
        void start(BackgroundCallback callback) throws Exception;
    }

    private final long timeoutNanos;
    private final Duration timeout;
    private final Set<CompletableFuture<CuratorEvent>> pending = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    Calls(Duration timeout) {
        this.timeout = timeout;
        this.timeoutNanos = saturatedNanos(timeout);
    }

    static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 4;
        }
    }

    /** @return the deadline, on {@link System#nanoTime()}, of an operation that starts now */
    long deadline() {
        return System.nanoTime() + Math.min(timeoutNanos, Long.MAX_VALUE / 4);
    }

    Duration timeout() {
        return timeout;
    }

    /** Starts an operation; its future completes with Curator's event, or fails if it could not start. */
    CompletableFuture<CuratorEvent> start(Op op) {
        CompletableFuture<CuratorEvent> f = new CompletableFuture<>();
        if (closed) {
            f.completeExceptionally(closedException());
            return f;
        }
        pending.add(f);
        f.whenComplete((r, t) -> pending.remove(f));
        try {
            op.start((client, event) -> f.complete(event));
        } catch (Exception e) {
            f.completeExceptionally(e);
        }
        if (closed) {
            f.completeExceptionally(closedException());
        }
        return f;
    }

    /**
     * Waits for an operation's answer until the deadline, without giving in to interrupts (the
     * flag is restored). The answer may be any result code; the caller interprets it.
     *
     * @throws LockBackendException if the deadline passes, the client closes or the operation
     *     could not start
     */
    CuratorEvent await(CompletableFuture<CuratorEvent> f, long deadline, String what, String lockName) {
        boolean interrupted = false;
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                try {
                    if (left <= 0) {
                        CuratorEvent done = f.getNow(null);
                        if (done != null) {
                            return done;
                        }
                        throw new TimeoutException();
                    }
                    return f.get(left, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (TimeoutException e) {
                    throw new ConnectionTrouble("ZooKeeper did not answer " + what + " within the operation timeout of "
                            + timeout, lockName);
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof LockBackendException) {
                        throw new LockBackendException(cause.getMessage(), lockName, cause);
                    }
                    throw new LockBackendException("ZooKeeper " + what + " could not be started: " + cause, lockName, cause);
                }
            }
        } finally {
            if (!f.isDone()) {
                forget(f); // nobody waits for it any more; its late answer is dropped
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Stops tracking an operation whose answer nobody waits for. */
    void forget(CompletableFuture<CuratorEvent> f) {
        pending.remove(f);
    }

    /** Waits like {@link #await}, then requires result code OK. */
    CuratorEvent awaitOk(CompletableFuture<CuratorEvent> f, long deadline, String what, String lockName) {
        CuratorEvent e = await(f, deadline, what, lockName);
        KeeperException.Code code = code(e);
        if (code != KeeperException.Code.OK) {
            throw failure(what, lockName, code);
        }
        return e;
    }

    static KeeperException.Code code(CuratorEvent e) {
        KeeperException.Code code = KeeperException.Code.get(e.getResultCode());
        return code == null ? KeeperException.Code.SYSTEMERROR : code;
    }

    /** The exception for a failed operation, with a hint where the code calls for one. */
    static LockBackendException failure(String what, String lockName, KeeperException.Code code) {
        if (code == KeeperException.Code.CONNECTIONLOSS || code == KeeperException.Code.SESSIONEXPIRED
                || code == KeeperException.Code.SESSIONMOVED || code == KeeperException.Code.OPERATIONTIMEOUT) {
            return new ConnectionTrouble("ZooKeeper " + what + " failed: " + code
                    + " (the connection to ZooKeeper was lost; the outcome is unknown)", lockName);
        }
        String hint = "";
        if (code == KeeperException.Code.NOAUTH || code == KeeperException.Code.INVALIDACL
                || code == KeeperException.Code.AUTHFAILED) {
            hint = " (the nodes belong to another ZooKeeper identity: use the same user and password "
                    + "in the URI, or another prefix or chroot)";
        }
        return new LockBackendException("ZooKeeper " + what + " failed: " + code + hint, lockName, null);
    }

    /** Fails every pending and future wait. */
    void close() {
        closed = true;
        for (CompletableFuture<CuratorEvent> f : new ArrayList<>(pending)) {
            f.completeExceptionally(closedException());
        }
    }

    boolean isClosed() {
        return closed;
    }

    private static LockBackendException closedException() {
        return new LockBackendException("the ZooKeeper backend is closed", null, null);
    }
}
