package io.dlock.etcd.internal;

import io.dlock.LockBackendException;
import io.dlock.Ticker;
import io.etcd.jetcd.common.exception.EtcdException;
import io.grpc.Status;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Runs jetcd's asynchronous calls against a deadline: waits without being interruptible (the
 * interrupt flag is kept for the caller), retries transient failures (no leader, leader changed,
 * connection lost) until the deadline where the caller says the operation is idempotent, cancels
 * what did not answer, and turns every failure into a {@link LockBackendException} whose message
 * names the operation, the lock and the servers, never the password.
 */
final class Calls {

    private static final long FIRST_BACKOFF = TimeUnit.MILLISECONDS.toNanos(20);
    private static final long MAX_BACKOFF = TimeUnit.MILLISECONDS.toNanos(250);

    private final EtcdSettings settings;
    private final Ticker ticker;
    private final Duration timeout;
    private final BooleanSupplier closed;

    Calls(EtcdSettings settings, Ticker ticker, Duration timeout, BooleanSupplier closed) {
        this.settings = settings;
        this.ticker = ticker;
        this.timeout = timeout;
        this.closed = closed;
    }

    /** @return a deadline on {@link System#nanoTime()}, one operation timeout from now */
    long deadline() {
        return System.nanoTime() + timeout.toNanos();
    }

    /**
     * Starts a call: the first request leaves at once.
     *
     * @param what the operation, for messages ("acquire", "release", ...)
     * @param lockName the lock, or null
     * @param op issues one request
     * @param retry whether the operation may be sent again after a transient failure (it is idempotent)
     * @return the call
     */
    <T> Call<T> start(String what, String lockName, Supplier<CompletableFuture<T>> op, boolean retry) {
        return new Call<>(what, lockName, op, retry);
    }

    /** Starts a call and waits for it; see {@link #start} and {@link Call#await}. */
    <T> T run(String what, String lockName, long deadline, Supplier<CompletableFuture<T>> op, boolean retry) {
        return start(what, lockName, op, retry).await(deadline);
    }

    /** One operation, possibly sent several times. Used by one thread at a time. */
    final class Call<T> {
        private final String what;
        private final String lockName;
        private final Supplier<CompletableFuture<T>> op;
        private final boolean retry;
        private CompletableFuture<T> future;
        private long sentAt;
        private int sends;
        private Throwable lastFailure;

        private Call(String what, String lockName, Supplier<CompletableFuture<T>> op, boolean retry) {
            this.what = what;
            this.lockName = lockName;
            this.op = op;
            this.retry = retry;
            send();
        }

        private void send() {
            sends++;
            sentAt = ticker.nanoTime();
            try {
                future = op.get();
            } catch (RuntimeException e) {
                future = CompletableFuture.failedFuture(e);
            }
        }

        /** @return the ticker reading taken just before the latest request was sent */
        long sentAt() {
            return sentAt;
        }

        /**
         * Waits for the answer until the deadline, retrying transient failures if allowed.
         *
         * @param deadline on {@link System#nanoTime()}
         * @return the answer
         * @throws LeaseGoneException if etcd says the lease the operation names does not exist
         * @throws LockBackendException if the call failed or did not answer in time
         */
        T await(long deadline) {
            boolean interrupted = false;
            long backoff = FIRST_BACKOFF;
            try {
                while (true) {
                    try {
                        return future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    } catch (InterruptedException e) {
                        interrupted = true;
                    } catch (TimeoutException e) {
                        future.cancel(true);
                        throw new LockBackendException("etcd: " + what + describeLock() + " got no answer within "
                                + timeout.toMillis() + " ms from " + settings.server()
                                + (lastFailure == null ? "" : " (sent " + sends + " times; the last failure: "
                                + scrub(describe(lastFailure)) + ")"), lockName, lastFailure);
                    } catch (ExecutionException | CancellationException | CompletionException e) {
                        Throwable cause = unwrap(e);
                        if (leaseNotFound(cause)) {
                            throw new LeaseGoneException("etcd: " + what + describeLock() + " failed: the etcd lease "
                                    + "expired or was revoked (" + scrub(describe(cause)) + ")", lockName, cause);
                        }
                        long left = deadline - System.nanoTime();
                        if (retry && !closed.getAsBoolean() && retryable(cause) && left > backoff) {
                            lastFailure = cause;
                            if (Thread.interrupted()) {
                                interrupted = true;
                            }
                            LockSupport.parkNanos(backoff);
                            backoff = Math.min(MAX_BACKOFF, backoff * 2);
                            send();
                            continue;
                        }
                        throw failure(cause);
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        private String describeLock() {
            return lockName == null ? "" : " of lock '" + lockName + "'";
        }

        private LockBackendException failure(Throwable cause) {
            String message;
            if (closed.getAsBoolean()) {
                message = "etcd: " + what + describeLock() + " failed: the lock client is closed";
            } else {
                message = "etcd: " + what + describeLock() + " failed at " + settings.server() + ": "
                        + scrub(describe(cause)) + (sends > 1 ? " (sent " + sends + " times)" : "") + hint(cause);
            }
            return new LockBackendException(message, lockName, cause);
        }
    }

    /** @return a hint for the usual cause of a connection failure, or empty */
    private String hint(Throwable cause) {
        if (!code(cause).equals("UNAVAILABLE")) {
            return "";
        }
        String d = describe(cause);
        if (settings.tls && d.contains("io exception")) {
            return "; with etcds://, check that the servers' certificates are trusted (the caFile parameter or "
                    + "EtcdLockProvider.withTrustManagerFactory) and name the hosts of the uri";
        }
        if (!settings.tls && d.contains("Network closed for unknown reason")) {
            return "; if the servers speak only TLS, use etcds://";
        }
        return "";
    }

    /**
     * Removes the URI's user, password and secret parameter values from a message (a server or
     * gRPC might echo them, an auth failure naming the user, say).
     */
    String scrub(String message) {
        return settings.uri.scrub(message);
    }

    static Throwable unwrap(Throwable t) {
        Throwable c = t;
        while ((c instanceof ExecutionException || c instanceof CompletionException) && c.getCause() != null) {
            c = c.getCause();
        }
        return c;
    }

    /** @return the gRPC status code name of a failure */
    static String code(Throwable t) {
        Throwable c = unwrap(t);
        if (c instanceof EtcdException) {
            return ((EtcdException) c).getErrorCode().name();
        }
        if (c instanceof CancellationException) {
            return "CANCELLED";
        }
        return Status.fromThrowable(c).getCode().name();
    }

    /** @return a short description of a failure: code, the server's or library's message, and the root cause */
    static String describe(Throwable t) {
        Throwable c = unwrap(t);
        String code = code(c);
        String text;
        if (c instanceof EtcdException) {
            text = c.getMessage();
        } else {
            Status s = Status.fromThrowable(c);
            text = s.getDescription();
            if (text == null && s.getCode() == Status.Code.UNKNOWN) {
                text = c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage();
            }
        }
        Throwable root = c;
        for (int i = 0; i < 10 && root.getCause() != null && root.getCause() != root; i++) {
            root = root.getCause();
        }
        if (root != c) {
            String more = root.getMessage() == null ? root.getClass().getSimpleName()
                    : root.getClass().getSimpleName() + ": " + root.getMessage();
            if (text == null || !text.contains(String.valueOf(root.getMessage()))) {
                text = text == null ? more : text + " (" + more + ")";
            }
        }
        if (text != null) {
            int nl = text.indexOf('\n');
            if (nl >= 0) {
                text = text.substring(0, nl).trim(); // gRPC appends the Netty pipeline on further lines
            }
        }
        return text == null ? code : code + ": " + text;
    }

    /** @return whether etcd answered that the lease named by the request does not exist */
    static boolean leaseNotFound(Throwable t) {
        return code(t).equals("NOT_FOUND") && describe(t).toLowerCase(Locale.ROOT).contains("lease not found");
    }

    /**
     * A failure worth sending an idempotent request again for: the server or the connection was
     * unavailable (no leader, leader changed, connection lost), or the auth token had to be renewed.
     * Not: bad credentials, permissions, invalid requests.
     */
    static boolean retryable(Throwable t) {
        String d = describe(t).toLowerCase(Locale.ROOT);
        if (d.contains("invalid auth token") || d.contains("revision of auth store is old")) {
            return true;
        }
        switch (code(t)) {
            case "UNAVAILABLE":
            case "UNKNOWN":
            case "INTERNAL":
            case "ABORTED":
            case "DEADLINE_EXCEEDED":
            case "RESOURCE_EXHAUSTED":
                return !d.contains("authentication failed");
            default:
                return false;
        }
    }
}
