package io.dlock.etcd.internal;

import io.dlock.LockBackendException;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.Ticker;
import io.dlock.spi.support.AddressProbe;
import io.dlock.spi.support.BoundedCalls;
import io.dlock.spi.support.Deadline;
import io.dlock.spi.support.LeaseTimes;
import io.dlock.spi.support.UriReader;
import io.etcd.jetcd.common.exception.EtcdException;
import io.grpc.Status;
import java.net.ConnectException;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import java.io.EOFException;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import javax.net.ssl.SSLException;

/**
 * Runs jetcd's asynchronous calls against a deadline: waits without being interruptible (the
 * interrupt flag is kept for the caller: the support kit's {@link BoundedCalls#awaitUninterruptibly},
 * in a loop of etcd's own), sends an idempotent request again to another member when
 * the one it went to is slow to answer (a hedge) or failed transiently (no leader, leader changed,
 * connection lost), cancels what did not answer, and turns every failure into a
 * {@link LockBackendException} whose message names the operation, the lock and the servers, never
 * the password.
 *
 * <p>jetcd balances requests over the members round robin, and a member that is up but cut off
 * from its peers accepts a request and answers nothing until its own timeout (a write it cannot
 * commit, a linearizable read it cannot confirm; once it knows it has no leader it refuses at
 * once, see the {@code hasleader} header). So a request without an answer after
 * {@link #hedgeNanos} is sent again, without cancelling the first: one copy per member the URI
 * names, back to back, so that round robin gives them different members; a second round follows
 * after another delay if still nothing answered. The first answer wins. Only idempotent requests
 * are copied; {@link Call#outcomeUncertain()} tells the caller that a copy it did not use may
 * still be applied later (the backend guards its creates against that). With one address in the
 * URI nothing is copied.
 */
final class Calls {

    private static final long FIRST_BACKOFF = TimeUnit.MILLISECONDS.toNanos(20);
    private static final long MAX_BACKOFF = TimeUnit.MILLISECONDS.toNanos(250);
    private static final long MIN_HEDGE = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long MAX_HEDGE = TimeUnit.SECONDS.toNanos(1);
    /** At most this many rounds of copies per call, so that a slow cluster is not flooded. */
    private static final int MAX_HEDGES = 2;
    /** The longest the probe of the addresses may take (see {@link AddressProbe}). */
    private static final Duration PROBE_BUDGET = Duration.ofMillis(250);

    private final EtcdSettings settings;
    private final Ticker ticker;
    private final Duration timeout;
    private final BooleanSupplier closed;
    /** How many members the URI names: the copies of one round of hedging. */
    private final int routes;
    /** How long a request may go unanswered before a copy is sent: a quarter of the timeout, 100 ms to 1 s. */
    private final long hedgeNanos;
    /** Whether any request of this client was ever answered: until then, a refused connection fails a call at once. */
    private volatile boolean reached;

    Calls(EtcdSettings settings, Ticker ticker, Duration timeout, BooleanSupplier closed) {
        this.settings = settings;
        this.ticker = ticker;
        this.timeout = timeout;
        this.closed = closed;
        this.routes = Math.max(1, settings.hosts.size());
        this.hedgeNanos = Math.min(MAX_HEDGE, Math.max(MIN_HEDGE, LeaseTimes.saturatedNanos(timeout) / 4));
    }

    /** @return a deadline on {@link System#nanoTime()}, one operation timeout from now (saturated) */
    long deadline() {
        return Deadline.after(timeout).nanoTime();
    }

    /**
     * Starts a call: the first request leaves at once.
     *
     * @param what the operation, for messages ("acquire", "release", ...)
     * @param lockName the lock, or null
     * @param op issues one request
     * @param retry whether the operation may be sent again, after a transient failure or while it
     *     goes unanswered (it is idempotent)
     * @return the call
     */
    <T> Call<T> start(String what, String lockName, Supplier<CompletableFuture<T>> op, boolean retry) {
        return new Call<>(what, lockName, op, retry);
    }

    /** Starts a call and waits for it; see {@link #start} and {@link Call#await}. */
    <T> T run(String what, String lockName, long deadline, Supplier<CompletableFuture<T>> op, boolean retry) {
        return start(what, lockName, op, retry).await(deadline);
    }

    /** One request of a call, in flight or answered. */
    private static final class Send<T> {
        final CompletableFuture<T> future;
        final long sentAt;

        Send(CompletableFuture<T> future, long sentAt) {
            this.future = future;
            this.sentAt = sentAt;
        }
    }

    /** One operation, possibly sent several times. Used by one thread at a time. */
    final class Call<T> {
        private final String what;
        private final String lockName;
        private final Supplier<CompletableFuture<T>> op;
        private final boolean retry;
        private final List<Send<T>> inFlight = new ArrayList<>();
        private int sends;
        private int hedges;
        private long lastSentAt;
        private Send<T> answered;
        /** When the next copy may be sent if nothing answered, on {@link System#nanoTime()}. */
        private long hedgeAt;
        private Throwable lastFailure;
        /** Whether this call probed the addresses already. */
        private boolean probed;

        private Call(String what, String lockName, Supplier<CompletableFuture<T>> op, boolean retry) {
            this.what = what;
            this.lockName = lockName;
            this.op = op;
            this.retry = retry;
            send();
        }

        private void send() {
            sends++;
            lastSentAt = ticker.nanoTime();
            CompletableFuture<T> future;
            try {
                future = op.get();
            } catch (RuntimeException e) {
                future = CompletableFuture.failedFuture(e);
            }
            inFlight.add(new Send<>(future, lastSentAt));
            hedgeAt = System.nanoTime() + hedgeNanos;
        }

        /**
         * @return the ticker reading taken just before the request whose answer was used was sent
         *     (before an answer: before the latest request)
         */
        long sentAt() {
            return answered != null ? answered.sentAt : lastSentAt;
        }

        /**
         * @return whether a request of this call may be applied by etcd later without this call
         *     knowing: every request sent but the one whose answer was used
         */
        boolean outcomeUncertain() {
            return sends > (answered != null ? 1 : 0);
        }

        /**
         * Waits for the answer until the deadline. An idempotent request is sent again after a
         * transient failure (after a backoff when no copy is in flight), and copies are sent while
         * the ones in flight go unanswered (see {@link Calls}); the first answer wins, and the
         * copies still in flight are cancelled.
         *
         * @param deadline on {@link System#nanoTime()}
         * @return the answer
         * @throws LeaseGoneException if etcd says the lease the operation names does not exist
         * @throws LockBackendException if the call failed or did not answer in time
         */
        T await(long deadline) {
            boolean interrupted = false;
            long backoff = FIRST_BACKOFF;
            long resendAt = 0;
            boolean resendDue = false;
            try {
                while (true) {
                    boolean failed = false;
                    for (Iterator<Send<T>> it = inFlight.iterator(); it.hasNext(); ) {
                        Send<T> s = it.next();
                        if (!s.future.isDone()) {
                            continue;
                        }
                        it.remove();
                        try {
                            T answer = s.future.join();
                            answered = s;
                            reached = true;
                            cancelInFlight();
                            return answer;
                        } catch (CompletionException | CancellationException e) {
                            Throwable cause = unwrap(e);
                            if (leaseNotFound(cause)) {
                                cancelInFlight();
                                throw new LeaseGoneException("etcd: " + what + describeLock() + " failed: the etcd "
                                        + "lease expired or was revoked (" + scrub(describe(cause)) + ")", lockName, cause);
                            }
                            lastFailure = cause;
                            notEtcd(cause);
                            if (!retry || closed.getAsBoolean() || !retryable(cause)) {
                                cancelInFlight();
                                throw failure(cause);
                            }
                            refusedEverywhere(cause);
                            failed = true;
                        }
                    }
                    long now = System.nanoTime();
                    if (deadline - now <= 0) {
                        cancelInFlight();
                        throw new LockBackendException("etcd: " + what + describeLock() + " got no answer within "
                                + TimeUnit.NANOSECONDS.toMillis(LeaseTimes.saturatedNanos(timeout)) + " ms from " + settings.server()
                                + (sends > 1 ? " (sent " + sends + " times" + (lastFailure == null ? ")"
                                : "; the last failure: " + scrub(describe(lastFailure)) + ")") : ""),
                                lockName, lastFailure);
                    }
                    // a request failed transiently: send it again after a backoff (round robin takes
                    // it to another member), unless as many as there are members are still in flight
                    if (failed && !resendDue && inFlight.size() < routes && deadline - now > backoff) {
                        resendDue = true;
                        resendAt = now + backoff;
                        backoff = Math.min(MAX_BACKOFF, backoff * 2);
                    }
                    if (inFlight.isEmpty() && !resendDue) {
                        throw failure(lastFailure); // no time left for another try
                    }
                    if (resendDue && now - resendAt >= 0) {
                        resendDue = false;
                        send();
                        continue;
                    }
                    long wakeAt = resendDue ? resendAt : deadline;
                    if (!inFlight.isEmpty() && retry && routes > 1 && hedges < MAX_HEDGES && !closed.getAsBoolean()) {
                        // slow to answer: a copy to every member. Round robin gives requests sent back
                        // to back different members, whatever took the pick just before; a single copy
                        // would go to the silent member again if one other request came in between
                        if (now - hedgeAt >= 0) {
                            hedges++;
                            for (int i = 0; i < routes; i++) {
                                send();
                            }
                            continue;
                        }
                        if (hedgeAt - wakeAt < 0) {
                            wakeAt = hedgeAt;
                        }
                    }
                    if (Thread.interrupted()) {
                        interrupted = true; // sends go out with the flag clear; set again when the call ends
                    }
                    // the support kit's waits: not cut short by an interrupt (they record it, cleared above)
                    if (inFlight.isEmpty()) {
                        BoundedCalls.sleepUninterruptibly(Deadline.at(wakeAt));
                    } else {
                        BoundedCalls.awaitUninterruptibly(anyOf(), Deadline.at(wakeAt));
                    }
                }
            } finally {
                if (interrupted || Thread.interrupted()) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /**
         * A client that has never reached a member, whose request was refused a connection: if
         * nothing listens at any address of the URI, retrying until the deadline cannot help (a
         * refusal is known at once), so the call fails now and says so. Once a member has answered,
         * refusals are retried as usual: a member that restarts refuses for a moment.
         */
        private void refusedEverywhere(Throwable cause) {
            if (reached || probed || !refused(cause)) {
                return;
            }
            probed = true;
            List<AddressProbe.Finding> findings = AddressProbe.probe(settings.hosts, PROBE_BUDGET);
            if (AddressProbe.nothingListens(findings)) {
                cancelInFlight();
                throw new LockBackendException("etcd: " + what + describeLock() + " failed: " + findings.stream()
                        .map(f -> f.describe("etcd")).collect(Collectors.joining("; ")), lockName, cause);
            }
        }

        /**
         * The server answered with bytes that are not HTTP/2, so not gRPC: another service listens at
         * the address (a Redis, an HTTP/1 server, garbage). Resending cannot help where the URI names
         * only that address, so the call fails now and says so; where it names several, another
         * member may answer, and the message at the deadline names the failure. A server dlock cannot
         * use ({@code INCOMPATIBLE_SERVER}), told by the type of Netty's HTTP/2 exception.
         */
        private void notEtcd(Throwable cause) {
            String http2 = http2Failure(cause);
            if (http2 == null || reached || settings.hosts.size() > 1) {
                return;
            }
            cancelInFlight();
            throw new LockConfigurationException(Kind.INCOMPATIBLE_SERVER, "etcd: " + what + describeLock()
                    + " failed: the server at " + UriReader.authority(settings.hosts.get(0)) + " does not speak etcd's"
                    + " protocol (gRPC over "
                    + "HTTP/2): " + scrub(http2) + "; check the host and port in the uri (etcd's client port, 2379 by "
                    + "default)", lockName, cause);
        }

        private CompletableFuture<Object> anyOf() {
            if (inFlight.size() == 1) {
                return inFlight.get(0).future.thenApply(t -> (Object) t);
            }
            CompletableFuture<?>[] futures = new CompletableFuture<?>[inFlight.size()];
            for (int i = 0; i < futures.length; i++) {
                futures[i] = inFlight.get(i).future;
            }
            return CompletableFuture.anyOf(futures);
        }

        private void cancelInFlight() {
            for (Send<T> s : inFlight) {
                s.future.cancel(true);
            }
            inFlight.clear();
        }

        private String describeLock() {
            return lockName == null ? "" : " of lock '" + lockName + "'";
        }

        private LockBackendException failure(Throwable cause) {
            if (closed.getAsBoolean()) {
                return new LockBackendException("etcd: " + what + describeLock() + " failed: the lock client is closed",
                        lockName, cause);
            }
            Kind kind = configurationKind(cause);
            String message = "etcd: " + what + describeLock() + " failed at " + settings.server() + ": "
                    + scrub(describe(cause)) + (sends > 1 ? " (sent " + sends + " times)" : "") + hint(kind, cause);
            return kind == null ? new LockBackendException(message, lockName, cause)
                    : new LockConfigurationException(kind, message, lockName, cause);
        }
    }

    /** @return what to check for a configuration failure or the usual cause of a connection failure, or empty */
    private String hint(Kind kind, Throwable cause) {
        if (kind == Kind.CREDENTIALS) {
            return causeCode(unwrap(cause)).equals("FAILED_PRECONDITION")
                    ? "; the server has authentication off: remove the user and password from the uri, or enable it"
                    : "; check the user and password in the uri";
        }
        if (kind == Kind.PERMISSION) {
            return "; the etcd user's roles need read and write access to the keys under the prefix '"
                    + settings.prefix + "' (a range permission) and the lease permissions";
        }
        if (kind == Kind.TLS) {
            return settings.tls ? "; with etcds://, check that the servers speak TLS, that their certificates are "
                    + "trusted (the caFile parameter or EtcdLockProvider.withTrustManagerFactory) and name the hosts "
                    + "of the uri" : "";
        }
        // a TLS server closes the connection on a plain client's first bytes, and a plain server on a
        // TLS client's, without a word, as a restarting server may: nothing typed tells them apart, so
        // these stay transient with a hint (the plain case's keyed to the description gRPC gives it)
        if (!code(cause).equals("UNAVAILABLE")) {
            return "";
        }
        if (settings.tls) {
            return "; with etcds://, also check that the servers speak TLS";
        }
        return describe(cause).contains("Network closed for unknown reason")
                ? "; if the servers speak only TLS, use etcds://" : "";
    }

    /**
     * Tells a failure that every retry would meet too, by the gRPC status code and the exception
     * types in its causes: {@code PERMISSION_DENIED} (a role without the key range) is
     * {@code PERMISSION}; {@code UNAUTHENTICATED} caused by etcd refusing jetcd's authenticate call
     * ({@code INVALID_ARGUMENT}: user or password wrong; {@code FAILED_PRECONDITION}: the server has
     * authentication off) is {@code CREDENTIALS}, whereas {@code UNAUTHENTICATED} alone is an expired
     * token, which jetcd renews, and an authenticate call that did not get through is transient; an
     * {@link SSLException} in the causes (the certificate not trusted or not naming the host, a server
     * that does not speak TLS) is {@code TLS}, unless the connection closed during the handshake,
     * which a restarting server does too.
     *
     * @param t a failure of a call
     * @return the kind, or null for a failure that may pass
     */
    static Kind configurationKind(Throwable t) {
        Throwable c = unwrap(t);
        String code = code(c);
        if (code.equals("PERMISSION_DENIED")) {
            return Kind.PERMISSION;
        }
        if (code.equals("UNAUTHENTICATED")) {
            String why = causeCode(c);
            return why.equals("INVALID_ARGUMENT") || why.equals("FAILED_PRECONDITION") ? Kind.CREDENTIALS : null;
        }
        boolean tls = false;
        for (Throwable x = c; x != null; x = x.getCause() == x ? null : x.getCause()) {
            if (x instanceof SSLException) {
                tls = true;
            }
            if (x instanceof ClosedChannelException || x instanceof EOFException) {
                return null;
            }
        }
        return tls ? Kind.TLS : null;
    }

    /** @return the first gRPC status code in a failure's causes that differs from its own, or "" */
    private static String causeCode(Throwable c) {
        String own = code(c);
        for (Throwable x = c.getCause(); x != null; x = x.getCause() == x ? null : x.getCause()) {
            String code = x instanceof StatusRuntimeException sre ? sre.getStatus().getCode().name()
                    : x instanceof StatusException se ? se.getStatus().getCode().name()
                    : x instanceof EtcdException ee ? ee.getErrorCode().name() : null;
            if (code != null && !code.equals(own)) {
                return code;
            }
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

    /**
     * @return the message of Netty's HTTP/2 protocol error in a failure's causes (the server's first
     *     bytes were not an HTTP/2 frame), or null. Matched by class name: Netty is gRPC's transport
     *     here, not a dependency of this module.
     */
    static String http2Failure(Throwable t) {
        for (Throwable c = unwrap(t); c != null; c = c.getCause() == c ? null : c.getCause()) {
            for (Class<?> k = c.getClass(); k != null; k = k.getSuperclass()) {
                if (k.getName().equals("io.netty.handler.codec.http2.Http2Exception")) {
                    return c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage();
                }
            }
        }
        return null;
    }

    /** @return whether a connection to a member was refused: nothing listened at its address */
    static boolean refused(Throwable t) {
        for (Throwable c = unwrap(t); c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof ConnectException) {
                return true;
            }
        }
        return false;
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
        if (configurationKind(t) != null) {
            return false;
        }
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
