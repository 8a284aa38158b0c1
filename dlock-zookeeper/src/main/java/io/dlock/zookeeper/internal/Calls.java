package io.dlock.zookeeper.internal;

import io.dlock.LockBackendException;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.spi.support.BoundedCalls;
import io.dlock.spi.support.BoundedCalls.OnInterrupt;
import io.dlock.spi.support.Deadline;
import io.dlock.spi.support.LeaseTimes;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;

/**
 * Runs Curator operations in the background and waits for their answers with a deadline of our
 * own, so that no call outlasts the operation timeout whatever the network does (a foreground
 * ZooKeeper call only fails when the client gives up on the connection, after two thirds of the
 * session timeout). The waiting is the support kit's ({@link BoundedCalls}): uninterruptible, the
 * flag restored ({@link OnInterrupt#FINISH}), and {@link #close()} fails every pending wait at
 * once. What stays here is ZooKeeper's: starting an operation with a callback, and what its
 * result codes and a missing answer mean.
 */
final class Calls {

    /** Starts one background operation with the given callback. */
    @FunctionalInterface
    interface Op {
        void start(BackgroundCallback callback) throws Exception;
    }

    private final Duration timeout;
    private final BoundedCalls calls;
    private volatile boolean credentialsRefused;

    Calls(Duration timeout) {
        this.timeout = timeout;
        this.calls = BoundedCalls.forFutures("ZooKeeper", timeout, new ZkFailures());
    }

    /** What the kit's waits end with, in ZooKeeper's terms. */
    private final class ZkFailures implements BoundedCalls.Failures {
        @Override
        public LockBackendException timedOut(BoundedCalls.Call call, Duration waited) {
            if (credentialsRefused) {
                return credentialsRefused(call.operation(), call.lockName(), null);
            }
            return new ConnectionTrouble("ZooKeeper did not answer " + call.operation()
                    + " within the operation timeout of " + timeout, call.lockName());
        }

        @Override
        public LockBackendException closed(BoundedCalls.Call call) {
            return new LockBackendException("the ZooKeeper backend is closed", call.lockName(), null);
        }

        @Override
        public LockBackendException failed(BoundedCalls.Call call, Throwable cause) {
            Throwable why = cause instanceof CouldNotStart && cause.getCause() != null ? cause.getCause() : cause;
            return new LockBackendException("ZooKeeper " + call.operation() + " could not be started: " + why,
                    call.lockName(), why);
        }
    }

    /** Carries what Curator threw when an operation could not start, checked or not, to {@link ZkFailures#failed}. */
    private static final class CouldNotStart extends Exception {
        private static final long serialVersionUID = 1L;

        CouldNotStart(Exception cause) {
            super(cause);
        }
    }

    static long saturatedNanos(Duration d) {
        return LeaseTimes.saturatedNanos(d);
    }

    /** @return the deadline, on {@link System#nanoTime()}, of an operation that starts now */
    long deadline() {
        return calls.deadline().nanoTime();
    }

    Duration timeout() {
        return timeout;
    }

    /** Starts an operation; its future completes with Curator's event, or fails if it could not start. */
    CompletableFuture<CuratorEvent> start(Op op) {
        CompletableFuture<CuratorEvent> f = calls.track(new CompletableFuture<>());
        if (f.isDone()) {
            return f; // closed
        }
        try {
            op.start((client, event) -> f.complete(event));
        } catch (Exception e) {
            f.completeExceptionally(new CouldNotStart(e)); // checked: the wait reports it as a failure to start
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
        return calls.await(f, Deadline.at(deadline), OnInterrupt.FINISH, what, lockName);
    }

    /** Stops tracking an operation whose answer nobody waits for. */
    void forget(CompletableFuture<CuratorEvent> f) {
        calls.forget(f);
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

    /**
     * The exception for a failed operation, with a hint where the code calls for one. A result code
     * that every retry would meet too is a {@link LockConfigurationException}: {@code NOAUTH} and
     * {@code INVALIDACL} (the nodes' ACL lets this identity not do it; a wrong digest password is
     * another identity, so it shows here) are {@code PERMISSION}, {@code AUTHFAILED} (the server
     * refused the credentials, or digest authentication is off) {@code CREDENTIALS},
     * {@code UNIMPLEMENTED} (a server too old for container nodes) {@code INCOMPATIBLE_SERVER}.
     */
    LockBackendException failure(String what, String lockName, KeeperException.Code code) {
        if (credentialsRefused) {
            return credentialsRefused(what, lockName, code);
        }
        if (code == KeeperException.Code.CONNECTIONLOSS || code == KeeperException.Code.SESSIONEXPIRED
                || code == KeeperException.Code.SESSIONMOVED || code == KeeperException.Code.OPERATIONTIMEOUT) {
            return new ConnectionTrouble("ZooKeeper " + what + " failed: " + code
                    + " (the connection to ZooKeeper was lost; the outcome is unknown)", lockName);
        }
        Kind kind;
        String hint;
        switch (code) {
            case NOAUTH:
            case INVALIDACL:
                kind = Kind.PERMISSION;
                hint = " (the nodes belong to another ZooKeeper identity: use the same user and password "
                        + "in the URI, or another prefix or chroot)";
                break;
            case AUTHFAILED:
                kind = Kind.CREDENTIALS;
                hint = " (the server refused the URI's credentials, or does not take digest authentication)";
                break;
            case UNIMPLEMENTED:
                kind = Kind.INCOMPATIBLE_SERVER;
                hint = " (the server lacks an operation dlock needs: container nodes need ZooKeeper 3.6 or later)";
                break;
            default:
                return new LockBackendException("ZooKeeper " + what + " failed: " + code, lockName, null);
        }
        return new LockConfigurationException(kind, "ZooKeeper " + what + " failed: " + code + hint, lockName, null);
    }

    /**
     * Says whether the server refused this client's credentials on its latest connection (the
     * session event {@code AuthFailed}; {@code false} again once a connection succeeds): the server
     * then closes the connection, so operations fail with {@code CONNECTIONLOSS} or no answer,
     * which must not pass for a passing outage.
     *
     * @param refused whether the credentials were refused
     */
    void credentialsRefused(boolean refused) {
        this.credentialsRefused = refused;
    }

    private static LockConfigurationException credentialsRefused(String what, String lockName, KeeperException.Code code) {
        return new LockConfigurationException(Kind.CREDENTIALS, "ZooKeeper " + what + " failed"
                + (code == null ? "" : ": " + code) + " (the server refused the URI's credentials: AuthFailed; check the"
                + " user and password, and that the servers take digest authentication)", lockName, null);
    }

    /** Fails every pending and future wait. */
    void close() {
        calls.close();
    }

    boolean isClosed() {
        return calls.isClosed();
    }
}
