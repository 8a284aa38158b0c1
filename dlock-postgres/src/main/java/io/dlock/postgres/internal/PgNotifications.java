package io.dlock.postgres.internal;

import io.dlock.LockBackendException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
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
 * <p>A broken connection wakes every waiter (they fall back to the core's bounded poll) and is
 * replaced, with a backoff of 50 ms doubling to 1 s; a connection quiet for 5 s is checked with one
 * {@code SELECT 1} under the operation timeout, so a dead link (frozen, black-holed) is found and
 * replaced too. Waits use a {@link ReentrantLock}, so virtual
 * threads do not pin. Thread-safe.
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
        long generation; // guarded by the lock

        Topic(String name) {
            this.name = name;
        }
    }

    /**
     * What a try saw, to tell a later notice from an earlier one.
     *
     * @param listening whether the LISTEN connection was up
     * @param epoch its connection epoch (raised by every connect and disconnect)
     * @param generation the topic's counter
     */
    record Snapshot(boolean listening, long epoch, long generation) {
    }

    private final PgConnections connections;
    private final String prefix;
    private final Duration timeout;
    private final ThreadFactory threads;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final Map<String, Topic> topics = new HashMap<>(); // guarded by lock
    private boolean listening; // guarded by lock
    private long epoch; // guarded by lock
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

    Snapshot snapshot(Topic topic) {
        lock.lock();
        try {
            return new Snapshot(listening, epoch, topic.generation);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until the LISTEN connection is up, or the deadline.
     *
     * @param deadline a {@link System#nanoTime()} reading
     * @throws InterruptedException if interrupted
     */
    void awaitListening(long deadline) throws InterruptedException {
        lock.lock();
        try {
            while (!listening && !closed) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                changed.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until a notice of the topic's name arrived after the snapshot, the connection changed,
     * or the deadline.
     *
     * @param topic the name
     * @param seen what the last try saw
     * @param deadline a {@link System#nanoTime()} reading
     * @throws InterruptedException if interrupted
     */
    void awaitChange(Topic topic, Snapshot seen, long deadline) throws InterruptedException {
        lock.lock();
        try {
            while (!closed && topic.generation == seen.generation() && epoch == seen.epoch()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                changed.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
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
        lock.lock();
        try {
            boolean any = false;
            for (PGNotification n : notices) {
                String p = n.getParameter();
                if (p != null && p.startsWith(prefix)) {
                    Topic t = topics.get(p.substring(prefix.length()));
                    if (t != null) {
                        t.generation++;
                        any = true;
                    }
                }
            }
            if (any) {
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    private void setListening(boolean up) {
        lock.lock();
        try {
            if (listening != up) {
                listening = up;
                epoch++;
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
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

    /** Stops the thread and closes its connection; wakes every waiter. Never throws. */
    @Override
    public void close() {
        Thread t;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            t = thread;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
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
