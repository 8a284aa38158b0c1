package io.dlock.internal;

import io.dlock.DistributedLock;
import io.dlock.ElectionListener;
import io.dlock.ElectionOptions;
import io.dlock.LeaderElection;
import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockConfigurationException;
import io.dlock.LockClient;
import io.dlock.LockHolder;
import io.dlock.RevokeReason;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one {@link LeaderElection} implementation: a thread that contends with
 * {@link DistributedLock#tryAcquire(Duration)} in bounded slices, and, once granted, watches the
 * lease until it is lost, resigned or closed.
 *
 * <p>State (the current term, the pause, closed) is guarded by {@code monitor}; listener calls are
 * serialized by {@code callbacks}, which is how {@code onRevoked} of a term always follows its
 * {@code onElected}. A term is revoked exactly once, by whoever gets there first: the lease's
 * {@code onLost} (a client thread), {@link #resign()} or {@link #close()} (the caller), or the
 * election thread when it finds the lease invalid without having been told (a closed client).
 */
public final class DefaultLeaderElection implements LeaderElection {

    private static final Logger LOG = LoggerFactory.getLogger(LeaderElection.class);
    private static final AtomicInteger IDS = new AtomicInteger();

    /** The longest single wait for the lock; close() interrupts it anyway. */
    private static final Duration SLICE = Duration.ofSeconds(5);
    /** How often a leader's thread looks at its lease, to notice a loss nobody reported. */
    private static final long WATCH_MILLIS = 100;

    private final LockClient client;
    private final String name;
    private final DistributedLock lock;
    private final ElectionOptions options;
    private final ElectionListener listener;
    private final String threadName;

    private final Object monitor = new Object();
    private final ReentrantLock callbacks = new ReentrantLock();

    private volatile Term current; // written under monitor
    private Thread thread; // guarded by monitor
    private boolean closed; // guarded by monitor
    private boolean acquiring; // guarded by monitor: the thread is inside tryAcquire
    private long pauseUntil; // guarded by monitor, System.nanoTime()
    private boolean pausing; // guarded by monitor

    /** One leadership: the lease behind it, and whether the listener has been told of it. */
    private static final class Term {
        final Lease lease;
        boolean elected; // guarded by callbacks
        boolean revoked; // guarded by monitor

        Term(Lease lease) {
            this.lease = lease;
        }
    }

    /**
     * Creates a candidate; see {@link LeaderElection#create(LockClient, String, ElectionOptions, ElectionListener)}.
     *
     * @param client the client
     * @param name the election's (and lock's) name
     * @param options the options
     * @param listener the listener
     * @throws IllegalArgumentException if an argument is null or invalid
     * @throws IllegalStateException if the client is closed
     */
    public DefaultLeaderElection(LockClient client, String name, ElectionOptions options, ElectionListener listener) {
        this.client = Checks.notNull("client", client);
        this.options = Checks.notNull("options", options);
        this.listener = Checks.notNull("listener", listener);
        Names.validate(name);
        this.name = name;
        this.lock = options.lockOptions().isPresent() ? client.lock(name, options.lockOptions().get()) : client.lock(name);
        String shortName = name.length() > 40 ? name.substring(0, 40) + "..." : name;
        this.threadName = "dlock-election-" + IDS.incrementAndGet() + "-" + shortName;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public LeaderElection start() {
        synchronized (monitor) {
            if (closed) {
                throw new IllegalStateException("the election '" + name + "' is closed");
            }
            if (thread == null) {
                thread = new Thread(this::run, threadName);
                thread.setDaemon(true);
                thread.start();
            }
        }
        return this;
    }

    @Override
    public boolean isLeader() {
        Term t = current;
        return t != null && t.lease.isValid();
    }

    @Override
    public OptionalLong term() {
        Term t = current;
        return t != null && t.lease.isValid() ? OptionalLong.of(t.lease.fencingToken()) : OptionalLong.empty();
    }

    @Override
    public Duration remaining() {
        Term t = current;
        return t != null ? t.lease.remaining() : Duration.ZERO;
    }

    @Override
    public Optional<LockHolder> leader() {
        return client.holder(name);
    }

    @Override
    public boolean resign() {
        Term t;
        synchronized (monitor) {
            t = current;
            if (t == null || closed) {
                return false;
            }
            // set before the revocation wakes the thread, so that it stays out
            pausing = true;
            pauseUntil = System.nanoTime() + Checks.saturatedNanos(options.resignPause());
        }
        boolean ended = revoke(t, RevokeReason.RESIGNED);
        t.lease.release();
        if (ended) {
            LOG.debug("dlock: resigned the leadership of '{}' (term {})", name, t.lease.fencingToken());
        }
        return ended;
    }

    @Override
    public void close() {
        Thread th;
        Term t;
        synchronized (monitor) {
            if (closed) {
                return;
            }
            closed = true;
            t = current;
            th = thread;
            if (th != null && acquiring) {
                th.interrupt(); // only ever inside tryAcquire, which strands nothing when interrupted
            }
            monitor.notifyAll();
        }
        if (t != null) {
            revoke(t, RevokeReason.CLOSED);
            t.lease.release();
        }
        if (th != null && th != Thread.currentThread()) {
            long waitMillis = client.config().operationTimeout().multipliedBy(2).toMillis() + 1000;
            try {
                th.join(waitMillis);
                if (th.isAlive()) {
                    LOG.warn("dlock: the thread of election '{}' did not stop within {} ms", name, waitMillis);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        Term t = current;
        return "LeaderElection{" + name + (t != null && t.lease.isValid() ? ", leader, term " + t.lease.fencingToken() : "")
                + "}";
    }

    // ------------------------------------------------------------------ the election thread

    private void run() {
        String failing = null; // what the current streak of failures is: a configuration kind, or "transient"
        try {
            while (true) {
                if (!pauseIfAsked()) {
                    return;
                }
                Optional<Lease> granted;
                try {
                    granted = lock.tryAcquire(SLICE);
                    if (failing != null) {
                        LOG.info("dlock: election '{}' reaches its backend again", name);
                        failing = null;
                    }
                } catch (InterruptedException e) {
                    if (isClosed()) {
                        return;
                    }
                    continue; // a stray interrupt: the election goes on
                } catch (IllegalStateException e) {
                    LOG.warn("dlock: election '{}' stops: {}", name, e.getMessage());
                    return; // the client was closed
                } catch (LockBackendException e) {
                    // a configuration failure is retried too (someone may fix it while we wait), but
                    // said to be one: a WARN when a streak starts or changes kind, DEBUG for the rest
                    String streak = e instanceof LockConfigurationException c ? c.kind().name() : "transient";
                    if (streak.equals(failing)) {
                        LOG.debug("dlock: election '{}' still cannot contend", name, e);
                    } else if (e instanceof LockConfigurationException c) {
                        LOG.warn("dlock: election '{}' cannot contend: its backend refuses the configuration ({}),"
                                + " which retrying does not change; fix it (the election retries every {}): {}", name,
                                c.kind(), options.retryDelay(), e.getMessage());
                    } else {
                        LOG.warn("dlock: election '{}' cannot reach its backend, retrying every {}: {}", name,
                                options.retryDelay(), e.getMessage());
                    }
                    failing = streak;
                    pause(options.retryDelay());
                    continue;
                } catch (RuntimeException e) {
                    LOG.warn("dlock: election '{}' failed to contend, retrying in {}", name, options.retryDelay(), e);
                    pause(options.retryDelay());
                    continue;
                } finally {
                    synchronized (monitor) {
                        acquiring = false;
                    }
                    Thread.interrupted(); // an interrupt meant for the wait must not reach the listener
                }
                if (granted.isPresent()) {
                    lead(granted.get());
                }
            }
        } finally {
            LOG.debug("dlock: the thread of election '{}' ends", name);
        }
    }

    /** Waits out a pause set by resign() or a failure; marks the thread as acquiring. False once closed. */
    private boolean pauseIfAsked() {
        synchronized (monitor) {
            while (!closed && pausing) {
                long left = pauseUntil - System.nanoTime();
                if (left <= 0) {
                    pausing = false;
                    break;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(monitor, left);
                } catch (InterruptedException e) {
                    // only close() interrupts, and it sets closed first
                }
            }
            if (closed) {
                return false;
            }
            acquiring = true;
            return true;
        }
    }

    private void pause(Duration d) {
        synchronized (monitor) {
            pausing = true;
            pauseUntil = System.nanoTime() + Checks.saturatedNanos(d);
        }
    }

    private boolean isClosed() {
        synchronized (monitor) {
            return closed;
        }
    }

    /** Holds the leadership of one grant until it ends. */
    private void lead(Lease lease) {
        Term t = new Term(lease);
        synchronized (monitor) {
            if (closed) {
                t = null;
            } else {
                current = t;
            }
        }
        if (t == null) {
            lease.release(); // closed while the grant was on its way: never elected
            return;
        }
        Term term = t;
        // called at once if the lease is already lost; otherwise on a client thread, as soon as
        // validity ends, which is before the server can grant the lock to anyone else
        lease.onLost(e -> revoke(term, RevokeReason.LOST));
        callbacks.lock();
        try {
            if (current == term && lease.isValid()) {
                term.elected = true;
                LOG.debug("dlock: elected leader of '{}', term {}", name, lease.fencingToken());
                try {
                    listener.onElected(lease.fencingToken());
                } catch (RuntimeException ex) {
                    LOG.warn("dlock: onElected of election '{}' threw", name, ex);
                }
            }
        } finally {
            callbacks.unlock();
        }
        while (true) {
            synchronized (monitor) {
                if (current != term || closed) {
                    return;
                }
                try {
                    monitor.wait(WATCH_MILLIS);
                } catch (InterruptedException e) {
                    // only close() interrupts, and it sets closed first
                }
            }
            // outside the monitor: isValid() may end the lease and run its listeners right here
            if (!lease.isValid()) {
                // normally onLost has revoked the term already; not when a closed client released it
                revoke(term, RevokeReason.LOST);
                return;
            }
        }
    }

    /**
     * Ends a term once: clears it, then tells the listener (if it was told of the election).
     *
     * @return true if this call ended the term
     */
    private boolean revoke(Term t, RevokeReason reason) {
        synchronized (monitor) {
            if (t.revoked) {
                return false;
            }
            t.revoked = true;
            if (current == t) {
                current = null;
            }
            monitor.notifyAll();
        }
        callbacks.lock();
        try {
            if (t.elected) {
                try {
                    listener.onRevoked(reason);
                } catch (RuntimeException ex) {
                    LOG.warn("dlock: onRevoked of election '{}' threw", name, ex);
                }
                if (reason == RevokeReason.LOST) { // after the call: the listener is told first
                    LOG.info("dlock: leadership of '{}' (term {}) lost; the lease's warning says why", name,
                            t.lease.fencingToken());
                }
            }
        } finally {
            callbacks.unlock();
        }
        return true;
    }
}
