package io.dlock.postgres.internal;

import io.dlock.LockBackendException;
import io.dlock.spi.support.ChangeSignal;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Release notices for this client's waiters: one connection that has run {@code LISTEN} on
 * {@link PgSql#CHANNEL}, read by one thread, started on the first wait and stopped by
 * {@link #close()}. A release (and the clean-up of a failed acquire) sends {@code pg_notify} in
 * its own transaction, so the notice is delivered once the lock is free. Notices of names nobody
 * here waits for are dropped; each waited-for name has a counter that every notice of it raises.
 *
 * <p>No thread waits for a notice: a waiting attempt holds a stage ({@link #whenListening()}, or
 * its topic's {@link ChangeSignal}) that the reader thread completes, outside the lock, when what
 * it waits for happens. A loss or return of the connection signals every topic (a notice may have
 * been missed meanwhile), so a broken connection completes every waiter's stage (they fall back
 * to the core's bounded poll) and is replaced, with a backoff of 50 ms doubling to 1 s; a connection quiet for
 * 5 s is checked with one {@code SELECT 1} under the operation timeout, so a dead link (frozen,
 * black-holed) is found and replaced too. Thread-safe.
 */
final class PgNotifications implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(PgNotifications.class);
    /** How long one read for notices blocks; bounds how soon close() is seen. */
    private static final int READ_MILLIS = 500;
    /** After this long without a notice, one query checks that the LISTEN connection still answers. */
    private static final long PROBE_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final long FIRST_BACKOFF_MILLIS = 50;
    private static final long MAX_BACKOFF_MILLIS = 1000;

    /** A name some waiter of this client waits for. */
    static final class Topic {
        final String name;
        int refs; // guarded by the lock
        /** Raised by every notice of the name and every change of the connection; closed by close(). */
        final ChangeSignal changes = new ChangeSignal();

        Topic(String name) {
            this.name = name;
        }
    }

    private final PgConnections connections;
    private final String prefix;
    private final Duration timeout;
    private final ThreadFactory threads;

    private final ReentrantLock lock = new ReentrantLock();
    /** Signalled by close(), for the reader thread's pause between connections. */
    private final Condition changed = lock.newCondition();
    /** Raised whenever the LISTEN connection comes up; closed by close(). */
    private final ChangeSignal up = new ChangeSignal();
    private final Map<String, Topic> topics = new HashMap<>(); // guarded by lock
    private boolean listening; // guarded by lock
    private boolean closed; // guarded by lock
    private Thread thread; // guarded by lock
    private volatile Connection connection;

    PgNotifications(PgConnections connections, String schema, Duration timeout, ThreadFactory threads) {
        this.connections = connections;
        this.prefix = schema + ".";
        this.timeout = timeout;
        this.threads = threads;
    }

    /**
     * Starts listening for a name (and the listener thread, on first use).
     *
     * @param name the lock name
     * @return the topic, to pass to {@link #unregister(Topic)} when the wait is over
     */
    Topic register(String name) {
        lock.lock();
        try {
            if (thread == null && !closed) {
                thread = threads.newThread(this::run);
                thread.setDaemon(true);
                thread.start();
            }
            Topic t = topics.computeIfAbsent(name, Topic::new);
            t.refs++;
            if (closed) {
                t.changes.close(); // nothing will signal it: its waits end at once
            }
            return t;
        } finally {
            lock.unlock();
        }
    }

    void unregister(Topic topic) {
        lock.lock();
        try {
            if (--topic.refs == 0) {
                topics.remove(topic.name, topic);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * @return a new stage that completes once the LISTEN connection is up (or this closes);
     *     complete already if it is
     */
    CompletableFuture<Void> whenListening() {
        long seen;
        lock.lock();
        try {
            if (listening || closed) {
                return CompletableFuture.completedFuture(null);
            }
            seen = up.generation(); // read with the state it belongs to
        } finally {
            lock.unlock();
        }
        return up.changeAfter(seen);
    }

    private boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    private void run() {
        long backoff = FIRST_BACKOFF_MILLIS;
        while (!isClosed()) {
            Connection c = null;
            try {
                c = connections.open("LISTEN for release notices", null, PgConnections.deadline(timeout));
                connection = c;
                if (isClosed()) {
                    break;
                }
                c.setNetworkTimeout(Runnable::run, (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis())));
                try (Statement s = c.createStatement()) {
                    s.execute("LISTEN " + PgSql.CHANNEL);
                }
                PGConnection pg = c.unwrap(PGConnection.class);
                setListening(true);
                backoff = FIRST_BACKOFF_MILLIS;
                long heard = System.nanoTime();
                while (!isClosed()) {
                    PGNotification[] notices = pg.getNotifications(READ_MILLIS);
                    if (notices != null && notices.length > 0) {
                        deliver(notices);
                        heard = System.nanoTime();
                    } else if (System.nanoTime() - heard > PROBE_NANOS) {
                        // a quiet connection may be a dead one (a frozen or black-holed link):
                        // one round trip, bounded by the network timeout, tells
                        try (Statement s = c.createStatement()) {
                            s.execute("SELECT 1");
                        }
                        heard = System.nanoTime();
                    }
                }
            } catch (SQLException | LockBackendException e) {
                if (!isClosed()) {
                    LOG.debug("dlock: the LISTEN connection failed; waiters poll until it is back", e);
                }
            } catch (RuntimeException e) {
                LOG.warn("dlock: the LISTEN connection failed unexpectedly; waiters poll until it is back", e);
            } finally {
                setListening(false);
                connection = null;
                if (c != null) {
                    connections.abort(c);
                    connections.closeQuietly(c);
                }
            }
            if (!pause(backoff)) {
                return;
            }
            backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
        }
    }

    private void deliver(PGNotification[] notices) {
        List<ChangeSignal> woken = new ArrayList<>();
        lock.lock();
        try {
            for (PGNotification n : notices) {
                String p = n.getParameter();
                if (p != null && p.startsWith(prefix)) {
                    Topic t = topics.get(p.substring(prefix.length()));
                    if (t != null) {
                        woken.add(t.changes);
                    }
                }
            }
        } finally {
            lock.unlock();
        }
        woken.forEach(ChangeSignal::signal); // outside the lock: what waits may try again at once
    }

    private void setListening(boolean nowUp) {
        List<ChangeSignal> woken;
        lock.lock();
        try {
            if (listening == nowUp) {
                return;
            }
            listening = nowUp;
            // a notice may have been missed while the connection changed: every topic is told
            woken = signals(nowUp);
        } finally {
            lock.unlock();
        }
        woken.forEach(ChangeSignal::signal);
    }

    // with lock held: every topic's signal, and the LISTEN signal if asked
    private List<ChangeSignal> signals(boolean upToo) {
        List<ChangeSignal> out = new ArrayList<>(topics.size() + 1);
        for (Topic t : topics.values()) {
            out.add(t.changes);
        }
        if (upToo) {
            out.add(up);
        }
        return out;
    }

    /** @return false if closed while pausing */
    private boolean pause(long millis) {
        lock.lock();
        try {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            while (!closed) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return true;
                }
                try {
                    changed.awaitNanos(left);
                } catch (InterruptedException e) {
                    return false; // only close() interrupts this thread
                }
            }
            return false;
        } finally {
            lock.unlock();
        }
    }

    /** @return whether the LISTEN connection is up now */
    boolean listening() {
        lock.lock();
        try {
            return listening;
        } finally {
            lock.unlock();
        }
    }

    /** Stops the thread and closes its connection; completes every waiter's stage. Never throws. */
    @Override
    public void close() {
        Thread t;
        List<ChangeSignal> woken;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            t = thread;
            woken = signals(true);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        woken.forEach(ChangeSignal::close);
        Connection c = connection;
        if (c != null) {
            connections.abort(c);
        }
        if (t != null) {
            t.interrupt();
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
