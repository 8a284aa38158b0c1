package io.dlock.postgres.internal;

import io.dlock.LockBackendException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The backend's connections for operations, at most {@code poolSize} at once, and THE place where a
 * call gets its deadline ({@link #call}): waiting for a free connection, opening one, and the
 * statement itself all end by one deadline, however the server or network behaves.
 *
 * <p>How the deadline is kept: a connection is opened on one of a few opener threads while the
 * caller waits at most until the deadline (the driver's own connect and login timeouts count in
 * whole seconds, and a paused server accepts the TCP connection and then never answers); a
 * statement runs on the caller's thread while a timer stands ready to {@link Connection#abort abort}
 * the connection at the deadline, which closes its socket and ends the blocked read at once (the
 * driver's socket timeout, also whole seconds, is only a backstop). A connection that failed, or
 * whose call ran into the deadline, is closed, never reused.
 *
 * <p>Connections come from the driver (the URI's server; idle ones are kept for the next call) or
 * from the application's {@code DataSource} (each call borrows one and gives it back at once, so
 * the pool's own idle handling applies; at most {@code poolSize} are borrowed at a time).
 * Thread-safe; waits use a {@link ReentrantLock}, never a monitor, so virtual threads do not pin.
 */
final class PgConnections implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(PgConnections.class);

    /** Opens one connection (blocking). */
    @FunctionalInterface
    interface Opener {
        Connection open() throws SQLException;
    }

    /** What a call does with its connection. */
    @FunctionalInterface
    interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    private final Opener opener;
    private final boolean keepIdle;
    private final int max;
    private final PgSettings settings;
    private final ScheduledThreadPoolExecutor timer;
    private final ThreadPoolExecutor openers;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition freed = lock.newCondition();
    private final ArrayDeque<Connection> idle = new ArrayDeque<>(); // guarded by lock
    private int inUse; // guarded by lock
    /** Connections a call is using now: close() aborts them, since their watchdogs stop with it. */
    private final java.util.Set<Connection> busy = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private boolean closed; // guarded by lock
    /** Connections opened and not yet closed, including idle ones and the listener's. */
    private final java.util.concurrent.atomic.AtomicInteger open = new java.util.concurrent.atomic.AtomicInteger();

    /**
     * @param opener makes a connection
     * @param keepIdle whether to keep connections between calls (the driver's own), or close
     *     (give back to the application's pool) after each call
     * @param max the most connections in use at once for calls
     * @param settings for messages and error kinds
     * @param threads the client's thread factory
     */
    PgConnections(Opener opener, boolean keepIdle, int max, PgSettings settings, ThreadFactory threads) {
        this.opener = opener;
        this.keepIdle = keepIdle;
        this.max = max;
        this.settings = settings;
        this.timer = new ScheduledThreadPoolExecutor(1, threads);
        this.timer.setRemoveOnCancelPolicy(true);
        // one opener per connection that may be in use, plus the listener's; idle openers end
        this.openers = new ThreadPoolExecutor(max + 1, max + 1, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                threads);
        this.openers.allowCoreThreadTimeOut(true);
    }

    /** @return how many connections this client holds open now (in use, idle, and the listener's) */
    int openConnections() {
        return open.get();
    }

    /**
     * Runs one piece of work on a connection, all of it by {@code deadline}: a retryable
     * {@link LockBackendException} if no connection is free, none can be opened, or the statement is
     * not answered in time; a {@link io.dlock.LockConfigurationException} for what retrying cannot
     * change. A connection taken from the idle ones that turns out to be dead (the server restarted
     * since) fails fast; the work then runs once more on a new connection, if time is left, so the
     * work must be safe to repeat.
     *
     * @param what the operation, for messages
     * @param lockName the lock, or null
     * @param deadline a {@link System#nanoTime()} reading
     * @param work the statements
     * @param <T> the result
     * @return what the work returned
     * @throws LockBackendException if the outcome is unknown or the call was refused
     */
    <T> T call(String what, String lockName, long deadline, Work<T> work) {
        if (Thread.currentThread().isInterrupted()) {
            throw new LockBackendException("the " + what + " was interrupted before it was sent", lockName, null);
        }
        takePermit(what, lockName, deadline);
        try {
            boolean retried = false;
            while (true) {
                Connection c = takeIdle();
                boolean reused = c != null;
                if (c == null) {
                    c = open(what, lockName, deadline);
                }
                AtomicBoolean fired = new AtomicBoolean();
                Connection armed = c;
                ScheduledFuture<?> watchdog = null;
                boolean healthy = false;
                busy.add(c);
                try {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw timeout(what, lockName, null);
                    }
                    try {
                        watchdog = timer.schedule(() -> {
                            fired.set(true);
                            abort(armed);
                        }, left, TimeUnit.NANOSECONDS);
                    } catch (java.util.concurrent.RejectedExecutionException e) {
                        throw new LockBackendException("the " + what + " cannot run: the client is closed", lockName, e);
                    }
                    T result = work.run(c);
                    healthy = true;
                    return result;
                } catch (SQLException e) {
                    if (fired.get()) {
                        throw timeout(what, lockName, e);
                    }
                    healthy = !PgErrors.connectionLost(e);
                    if (!healthy && reused && !retried && deadline - System.nanoTime() > 0
                            && !Thread.currentThread().isInterrupted()) {
                        retried = true; // a connection that died while idle: once more on a new one
                        LOG.debug("dlock: a kept connection to {} failed ({}); the {} is sent again on a new one",
                                settings.server(), e.getSQLState(), what);
                        continue;
                    }
                    throw PgErrors.translate(e, what, lockName, settings);
                } catch (RuntimeException e) {
                    if (e instanceof LockBackendException) {
                        throw e;
                    }
                    throw new LockBackendException("the " + what + " failed on " + settings.server() + ": "
                            + settings.uri.scrub(String.valueOf(e)), lockName, e);
                } finally {
                    busy.remove(c);
                    if (watchdog != null) {
                        watchdog.cancel(false);
                    }
                    giveBack(c, healthy && !fired.get());
                }
            }
        } finally {
            returnPermit();
        }
    }

    private LockBackendException timeout(String what, String lockName, Throwable cause) {
        return new LockBackendException("the " + what + " got no answer from " + settings.server()
                + " within the operation timeout", lockName, cause);
    }

    private void takePermit(String what, String lockName, long deadline) {
        lock.lock();
        try {
            while (!closed && inUse >= max) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new LockBackendException("the " + what + " found none of the " + max + " connections to "
                            + settings.server() + " free within the operation timeout (uri parameter poolSize)",
                            lockName, null);
                }
                try {
                    freed.awaitNanos(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new LockBackendException("the " + what + " was interrupted while waiting for a connection",
                            lockName, e);
                }
            }
            if (closed) {
                throw new LockBackendException("the " + what + " cannot run: the client is closed", lockName, null);
            }
            inUse++;
        } finally {
            lock.unlock();
        }
    }

    private void returnPermit() {
        lock.lock();
        try {
            inUse--;
            freed.signal();
        } finally {
            lock.unlock();
        }
    }

    private Connection takeIdle() {
        lock.lock();
        try {
            return idle.pollFirst();
        } finally {
            lock.unlock();
        }
    }

    private void giveBack(Connection c, boolean healthy) {
        if (healthy && keepIdle) {
            lock.lock();
            try {
                if (!closed) {
                    idle.addFirst(c);
                    return;
                }
            } finally {
                lock.unlock();
            }
        }
        if (!healthy) {
            abort(c); // never block on a connection that may be stuck: its socket is closed at once
        }
        closeQuietly(c);
    }

    /**
     * Opens a connection by the deadline, on an opener thread. One that arrives later is closed
     * when it does.
     *
     * @param what the operation, for messages
     * @param lockName the lock, or null
     * @param deadline a {@link System#nanoTime()} reading
     * @return the connection, in autocommit mode
     * @throws LockBackendException if none is made in time, or the server refuses
     */
    Connection open(String what, String lockName, long deadline) {
        CompletableFuture<Connection> f;
        try {
            f = CompletableFuture.supplyAsync(() -> {
                try {
                    Connection c = opener.open();
                    open.incrementAndGet();
                    return c;
                } catch (SQLException e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            }, openers);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            throw new LockBackendException("the " + what + " cannot run: the client is closed", lockName, e);
        }
        try {
            long left = Math.max(0, deadline - System.nanoTime());
            return f.get(left, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            f.thenAccept(this::closeQuietly);
            throw new LockBackendException("the " + what + " could not connect to " + settings.server()
                    + " within the operation timeout", lockName, null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            f.thenAccept(this::closeQuietly);
            throw new LockBackendException("the " + what + " was interrupted while connecting", lockName, e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() instanceof java.util.concurrent.CompletionException ce && ce.getCause() != null
                    ? ce.getCause() : e.getCause();
            if (cause instanceof SQLException sql) {
                throw PgErrors.translate(sql, what + " (connecting)", lockName, settings);
            }
            throw new LockBackendException("the " + what + " could not connect to " + settings.server() + ": "
                    + settings.uri.scrub(String.valueOf(cause)), lockName, cause);
        }
    }

    /**
     * Closes the socket of a connection at once, from any thread: a statement blocked on it ends.
     *
     * @param c the connection
     */
    void abort(Connection c) {
        try {
            c.abort(Runnable::run);
        } catch (SQLException | RuntimeException e) {
            LOG.trace("dlock: aborting a connection failed", e);
        }
    }

    /**
     * Closes a connection (or gives it back to the application's pool), never throwing.
     *
     * @param c the connection, or null
     */
    void closeQuietly(Connection c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (SQLException | RuntimeException e) {
            LOG.trace("dlock: closing a connection failed", e);
        } finally {
            open.decrementAndGet();
        }
    }

    /** Closes the idle connections and stops the threads; calls in flight end by their deadline. */
    @Override
    public void close() {
        List<Connection> toClose;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            toClose = new ArrayList<>(idle);
            idle.clear();
            freed.signalAll();
        } finally {
            lock.unlock();
        }
        toClose.forEach(this::closeQuietly);
        busy.forEach(this::abort);
        timer.shutdownNow();
        openers.shutdown();
    }

    /** @return the deadline one operation timeout from now */
    static long deadline(Duration timeout) {
        return System.nanoTime() + Math.min(timeout.toNanos(), Long.MAX_VALUE / 4);
    }
}
