package io.dlock.internal;

import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockLostException;
import io.dlock.LockOptions;
import io.dlock.LostReason;
import io.dlock.spi.Grant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The core's lease, the user's {@link Lease}: validity on the client's ticker, state, listeners.
 * It holds the backend's {@link Grant} privately and is never handed to the backend, so neither the
 * user nor the backend can reach the other's object. State changes happen under this object's
 * monitor; reads of validity are lock-free.
 *
 * @param <S> the backend's per-grant state type
 */
final class DefaultLease<S> implements Lease {

    private static final Logger LOG = LoggerFactory.getLogger(Lease.class);

    enum State { HELD, RELEASED, LOST }

    private final DefaultLockClient client;
    private final BackendHandle<S> backend;
    private final Grant<S> grant;
    private final String name;
    private final long token;
    private final LockOptions options;
    private final long leaseNanos;
    private final long marginNanos;
    private final long renewNanos;
    private final long grantedAt;
    final LocalQueue.Waiter slot;

    private volatile State state = State.HELD;
    private volatile long validUntil;
    private volatile long nextRenewAt;
    private LostReason lostReason; // guarded by this
    private boolean listenersFired; // guarded by this
    private final List<Consumer<? super LockLostException>> listeners = new ArrayList<>(1); // guarded by this
    private boolean releaseSent; // guarded by this
    private Scheduler.Task expiryTask; // guarded by this
    // the current streak of failed renewals, for the log: how many, since when, the last cause
    private int renewFailures; // guarded by this
    private long failingSince; // guarded by this
    private Throwable lastRenewFailure; // guarded by this
    // the renewal request in flight, if any: when it was sent and the last one that succeeded, for the log
    private boolean renewInFlight; // guarded by this
    private long renewSentAt; // guarded by this
    private long lastRenewedAt; // guarded by this

    DefaultLease(DefaultLockClient client, BackendHandle<S> backend, Grant<S> grant, LockOptions options,
                 long sentAt, LocalQueue.Waiter slot) {
        this.client = client;
        this.backend = backend;
        this.grant = grant;
        this.slot = slot;
        this.name = grant.name();
        this.token = grant.fencingToken();
        this.options = options;
        this.leaseNanos = Checks.saturatedNanos(options.leaseTime());
        this.marginNanos = driftMargin(leaseNanos);
        this.renewNanos = Checks.saturatedNanos(options.renewInterval());
        this.grantedAt = sentAt;
        this.validUntil = sentAt + leaseNanos - marginNanos;
        this.nextRenewAt = sentAt + renewNanos;
        this.lastRenewedAt = sentAt;
    }

    /**
     * The margin subtracted from every validity window: 1% of the lease for clock-rate drift
     * between holder and server, plus the time it takes to tell the holder (the expiry timer firing
     * and {@code onLost} listeners being dispatched on a busy machine): 50 ms, or a tenth of very
     * short leases.
     */
    static long driftMargin(long leaseNanos) {
        return leaseNanos / 100 + Math.min(50_000_000L, leaseNanos / 10);
    }

    // ---- Lease ----

    @Override
    public String lockName() {
        return name;
    }

    @Override
    public long fencingToken() {
        return token;
    }

    @Override
    public String ownerId() {
        return grant.ownerId();
    }

    @Override
    public boolean isValid() {
        if (state != State.HELD) {
            return false;
        }
        if (client.ticker().nanoTime() - validUntil >= 0) {
            expire();
            return false;
        }
        return true;
    }

    @Override
    public Duration remaining() {
        if (!isValid()) {
            return Duration.ZERO;
        }
        long left = validUntil - client.ticker().nanoTime();
        return left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }

    @Override
    public void ensureValid() {
        if (isValid()) {
            return;
        }
        LostReason reason;
        synchronized (this) {
            if (state == State.RELEASED) {
                throw new IllegalStateException("the lease on lock '" + name + "' (token " + token + ") was released");
            }
            reason = lostReason;
        }
        throw new LockLostException(name, token, reason);
    }

    @Override
    public void onLost(Consumer<? super LockLostException> listener) {
        Checks.notNull("listener", listener);
        LockLostException fireNow = null;
        synchronized (this) {
            if (listenersFired) {
                fireNow = new LockLostException(name, token, lostReason);
            } else if (state != State.RELEASED) {
                listeners.add(listener);
            }
        }
        if (fireNow != null) {
            listener.accept(fireNow);
        }
    }

    @Override
    public void release() {
        boolean wasHeld;
        boolean sendRelease;
        synchronized (this) {
            wasHeld = state == State.HELD;
            sendRelease = markReleased();
        }
        if (wasHeld) {
            backend.renewer().remove(this);
        }
        if (sendRelease) {
            sendRelease();
        }
        if (wasHeld) {
            releasedLocally();
        }
    }

    @Override
    public void close() {
        release();
    }

    /**
     * For the client's close: ends the lease as released here and now (invalid, not renewed, its
     * local slot freed, the listener told) without talking to the backend.
     *
     * @return true if the caller must still send the release to the backend
     */
    boolean releaseLocally() {
        boolean wasHeld;
        boolean sendRelease;
        synchronized (this) {
            wasHeld = state == State.HELD;
            sendRelease = markReleased();
        }
        if (wasHeld) {
            backend.renewer().remove(this);
            releasedLocally();
        }
        return sendRelease;
    }

    /**
     * Ends a held lease as released and claims the one release request of this lease; the caller
     * holds this.
     *
     * @return true if the caller must send the release request
     */
    private boolean markReleased() {
        State previous = state;
        if (previous == State.HELD) {
            state = State.RELEASED;
            cancelExpiryTimer();
        }
        boolean send = !releaseSent && previous != State.RELEASED && lostReason != LostReason.SUPERSEDED;
        releaseSent = true;
        return send;
    }

    private void releasedLocally() {
        client.leaseEnded(this);
        client.listener().released(name, token, Duration.ofNanos(client.ticker().nanoTime() - grantedAt));
    }

    /**
     * Sends the owner-checked release to the backend; never throws. A failure is a warning, or a
     * debug line once the client is closing (close() sums its failures up in one line, and the
     * server frees the lock when its lease ends).
     *
     * @return true if the backend answered (released, or this owner no longer held it)
     */
    boolean sendRelease() {
        try {
            backend.backend().release(grant);
            return true;
        } catch (LockBackendException e) {
            if (client.isClosed()) {
                LOG.debug("dlock: release of lock '{}' (token {}) at close failed; the server frees it when its lease "
                        + "ends", name, token, e);
                return false;
            }
            LOG.warn("dlock: release of lock '{}' (token {}) failed; the server keeps it until its lease ends or "
                    + "the backend's own retry succeeds: {}", name, token, e.getMessage());
        } catch (RuntimeException e) {
            LOG.warn("dlock: release of lock '{}' (token {}) failed unexpectedly", name, token, e);
        }
        return false;
    }

    // ---- core ----

    /** @return what the backend sees of this lease */
    Grant<S> grant() {
        return grant;
    }

    String name() {
        return name;
    }

    LockOptions options() {
        return options;
    }

    long nextRenewAt() {
        return nextRenewAt;
    }

    long renewNanos() {
        return renewNanos;
    }

    long validUntil() {
        return validUntil;
    }

    State state() {
        return state;
    }

    /** Starts renewal if the options ask for it, and arms the expiry timer; called once the lease is registered with the client. */
    void start() {
        if (options.autoRenew()) {
            backend.renewer().add(this);
        }
        synchronized (this) {
            if (state == State.HELD) {
                armExpiryTimer();
            }
        }
    }

    /**
     * A renewal request for this lease is about to be sent: if validity ends before its answer,
     * the loss says so.
     *
     * @param sentAt the ticker reading taken just before it is sent
     */
    synchronized void renewalSent(long sentAt) {
        renewInFlight = true;
        renewSentAt = sentAt;
    }

    /** A renewal request sent at {@code sentAt} succeeded. Never resurrects an ended lease. */
    void renewed(long sentAt) {
        boolean expired = false;
        int failures;
        long failingFor = 0;
        long left = 0;
        synchronized (this) {
            if (state != State.HELD) {
                return;
            }
            long now = client.ticker().nanoTime();
            failures = renewFailures;
            renewInFlight = false;
            if (now - validUntil >= 0) {
                expired = true; // validity ran out before the answer: the holder may have been told
            } else {
                long until = sentAt + leaseNanos - marginNanos;
                if (until - validUntil > 0) {
                    validUntil = until;
                }
                nextRenewAt = sentAt + renewNanos;
                lastRenewedAt = sentAt;
                failingFor = now - failingSince;
                left = validUntil - now;
                renewFailures = 0;
                lastRenewFailure = null;
            }
        }
        if (expired) {
            lost(LostReason.EXPIRED, "a renewal answer arrived after validity had ended"
                    + (failures > 0 ? ", " + failureStreak() : ""));
            return;
        }
        if (failures > 0) {
            // closes the warning of the failure streak
            LOG.info("dlock: renewal recovered: lock '{}' token {} renewed after {} failed attempt(s) over {} ms; "
                    + "{} ms of validity left", name, token, failures, millis(failingFor), millis(left));
        }
        client.listener().renewed(name, token);
    }

    /**
     * A renewal failed with an unknown outcome: retry soon, while still valid. The first failure of
     * a streak is one warning; the retries are logged at debug level.
     */
    void renewFailed(Throwable cause, long now) {
        if (state != State.HELD) {
            return;
        }
        long retryNanos = Math.max(20_000_000L, renewNanos / 4);
        nextRenewAt = now + retryNanos;
        int failures;
        synchronized (this) {
            if (state != State.HELD) {
                return;
            }
            renewInFlight = false;
            if (renewFailures++ == 0) {
                failingSince = now;
            }
            failures = renewFailures;
            lastRenewFailure = cause;
        }
        client.listener().renewalFailed(name, token, cause);
        long left = Math.max(0, validUntil - now);
        if (failures == 1) {
            LOG.warn("dlock: renewal failed: lock '{}' token {}, {} ms of validity left, retrying every {} ms until "
                    + "then; cause: {}", name, token, millis(left), millis(retryNanos), describe(cause));
        } else {
            LOG.debug("dlock: renewal failed again ({} in a row): lock '{}' token {}, {} ms of validity left; cause: {}",
                    failures, name, token, millis(left), describe(cause));
        }
    }

    private void expire() {
        String cause;
        synchronized (this) {
            long now = client.ticker().nanoTime();
            if (renewFailures > 0) {
                cause = failureStreak();
            } else if (!options.autoRenew()) {
                cause = "the lease time ran out (auto-renewal is off for this lock)";
            } else if (renewInFlight) {
                // all that is known: a request went out and nothing came back in time
                cause = "no answer to the renewal sent " + millis(now - renewSentAt) + " ms earlier: the server, the "
                        + "network to it, or this process stalled (a paused or overloaded server, lost packets, a "
                        + "long GC pause)";
            } else {
                // nothing was even sent: the renewer of this process did not run
                cause = "no renewal was sent in the " + millis(now - lastRenewedAt) + " ms since the last one "
                        + "succeeded (one was due every " + millis(renewNanos) + " ms): this process stalled (a long "
                        + "GC pause, CPU starvation, a suspended VM) or its worker threads were all busy";
            }
        }
        lost(LostReason.EXPIRED, cause);
    }

    /** @return the current renewal failure streak, described for the log; caller holds this */
    private String failureStreak() {
        return "renewal failing for " + millis(client.ticker().nanoTime() - failingSince) + " ms (" + renewFailures
                + " attempt(s)), last: " + describe(lastRenewFailure);
    }

    private static String describe(Throwable t) {
        if (t == null) {
            return "unknown";
        }
        String m = t.getMessage();
        return t.getClass().getSimpleName() + (m == null || m.isEmpty() ? "" : ": " + m);
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    /**
     * Ends the lease as lost, once, reported by the backend or by the renewer; fires listeners on
     * the client's worker.
     */
    void lost(LostReason reason) {
        Runnable rest = markLost(reason);
        if (rest != null) {
            rest.run();
        }
    }

    /**
     * The first half of {@link #lost(LostReason)}: marks the lease lost at once (so
     * {@link #isValid()} is false from here on) and returns the rest (the log line, the listeners,
     * the release in the background) for the caller to run, or null if the lease was no longer
     * held. A backend that loses every lease at once marks them all before any listener runs, so no
     * listener sees another lease of the same loss still valid.
     *
     * @param reason why
     * @return the rest of the loss, or null
     */
    Runnable markLost(LostReason reason) {
        String cause;
        switch (reason) {
            case SUPERSEDED:
                cause = "the backend answered that this owner no longer holds the lock (its server-side lease ended "
                        + "or the lock was taken over)";
                break;
            case SESSION_LOST:
                cause = "the backend's session that vouched for the lease ended or can no longer be trusted "
                        + "(see the backend's warning before this line)";
                break;
            default:
                cause = "reported by the backend";
                break;
        }
        return markLost(reason, cause);
    }

    private void lost(LostReason reason, String cause) {
        Runnable rest = markLost(reason, cause);
        if (rest != null) {
            rest.run();
        }
    }

    private Runnable markLost(LostReason reason, String cause) {
        List<Consumer<? super LockLostException>> toFire;
        boolean sendRelease;
        long now;
        long left;
        synchronized (this) {
            if (state != State.HELD) {
                return null;
            }
            now = client.ticker().nanoTime();
            left = Math.max(0, validUntil - now);
            state = State.LOST;
            lostReason = reason;
            listenersFired = true;
            cancelExpiryTimer();
            toFire = new ArrayList<>(listeners);
            listeners.clear();
            sendRelease = reason != LostReason.SUPERSEDED && !releaseSent;
            releaseSent = true;
        }
        return () -> {
            backend.renewer().remove(this);
            client.leaseEnded(this);
            LOG.warn("dlock: lease lost: lock '{}' token {}, reason {}, {} ms of validity left (lease time {} ms, held "
                    + "for {} ms); cause: {}", name, token, reason, millis(left), millis(leaseNanos),
                    millis(now - grantedAt), cause);
            client.listener().leaseLost(name, token, reason);
            LockLostException event = new LockLostException(name, token, reason);
            client.dispatch(() -> {
                for (Consumer<? super LockLostException> l : toFire) {
                    try {
                        l.accept(event);
                    } catch (RuntimeException e) {
                        LOG.warn("dlock: an onLost listener of lock '{}' threw", name, e);
                    }
                }
                if (sendRelease) {
                    // the holder has been told; free the server side early rather than at expiry, a few at a time
                    client.releaseInBackground(this);
                }
            });
        };
    }

    private void armExpiryTimer() {
        long delay = validUntil - client.ticker().nanoTime();
        expiryTask = client.scheduler().schedule(this::checkExpiry, delay);
    }

    private void cancelExpiryTimer() {
        if (expiryTask != null) {
            expiryTask.cancel();
            expiryTask = null;
        }
    }

    private void checkExpiry() {
        boolean expired = false;
        synchronized (this) {
            if (state != State.HELD) {
                return;
            }
            if (client.ticker().nanoTime() - validUntil >= 0) {
                expired = true;
            } else {
                armExpiryTimer();
            }
        }
        if (expired) {
            expire();
        }
    }

    @Override
    public String toString() {
        return "Lease{" + name + ", token=" + token + ", " + state + "}";
    }
}
