package io.dlock.redis.internal;

import io.dlock.spi.support.ChangeSignal;
import java.io.IOException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.Connection;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisPubSub;
import redis.clients.jedis.JedisSocketFactory;
import redis.clients.jedis.exceptions.JedisConnectionException;

/**
 * One client's pub/sub connection, on which waiters learn that a lock was released.
 *
 * <p>One thread (from the client's thread factory) reads the connection; it is started on the
 * first wait, not when the client opens. A channel is subscribed while at least one acquisition of
 * this client waits on it and unsubscribed after (reference counts per channel; a channel's entry
 * is dropped once nobody waits and the server has answered every command sent for it), so the
 * state stays as small as the set of names being waited on. The connection also stays subscribed
 * to the client's own control channel, so that it remains in subscriber mode with no waiters.
 *
 * <p>Writes to the connection come from waiting threads and from the reader, always under
 * {@link #lock}. Replies arrive in the order commands were sent, so a channel counts as
 * subscribed once every command sent for it has been answered and the last was a subscribe.
 *
 * <p>If the connection fails, every waiter is woken (it then polls) and the connection is made
 * again on a later wait, at most once a second. {@link #close()} closes the socket, which ends the
 * reader, and waits for the thread to end.
 */
final class ReleaseSubscriber implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ReleaseSubscriber.class);

    /** The least time between two connection attempts after one failed or broke. */
    static final long RECONNECT_DELAY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final RedisSettings settings;
    private final JedisClientConfig clientConfig;
    private final RedisSocketFactory socketFactory;
    private final ThreadFactory threads;
    private final String controlChannel;
    private final long joinMillis;

    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, Topic> topics = new HashMap<>(); // guarded by lock
    private Session session; // guarded by lock; the connection being made or read, or null
    private long reconnectAt; // guarded by lock
    private boolean reconnectDelayed; // guarded by lock
    private boolean closed; // guarded by lock

    ReleaseSubscriber(RedisSettings settings, JedisClientConfig clientConfig, RedisSocketFactory socketFactory,
                      ThreadFactory threads, String controlChannel, long joinMillis) {
        this.settings = settings;
        this.clientConfig = clientConfig;
        this.socketFactory = socketFactory;
        this.threads = threads;
        this.controlChannel = controlChannel;
        this.joinMillis = joinMillis;
    }

    /**
     * One channel that waiters of this client listen on. The counters that track the server's
     * answers are guarded by this topic's own lock (taken inside {@link ReleaseSubscriber#lock}
     * where both are held). A waiting attempt holds no thread: it holds a stage of one of the
     * topic's two {@link ChangeSignal}s, which the reader thread signals (outside this lock) when
     * what it waits for happens.
     */
    static final class Topic {
        final String channel;
        int refs; // guarded by ReleaseSubscriber.lock
        private final ReentrantLock state = new ReentrantLock();
        private int pending; // commands sent, not yet answered
        private boolean subscribed; // the last answer was a subscribe
        /** Raised by every notice and by the loss of the connection; closed with the subscriber. */
        private final ChangeSignal changes = new ChangeSignal();
        /** Raised by every answer, notice and loss of the connection; closed with the subscriber. */
        private final ChangeSignal answers = new ChangeSignal();

        Topic(String channel) {
            this.channel = channel;
        }

        void sent() {
            state.lock();
            try {
                pending++;
            } finally {
                state.unlock();
            }
        }

        void answered(boolean subscribe) {
            state.lock();
            try {
                if (pending > 0) {
                    pending--;
                }
                subscribed = subscribe;
            } finally {
                state.unlock();
            }
            answers.signal();
        }

        void message() {
            changes.signal();
            answers.signal();
        }

        void reset(boolean close) {
            state.lock();
            try {
                pending = 0;
                subscribed = false;
            } finally {
                state.unlock();
            }
            if (close) {
                changes.close();
                answers.close();
            } else {
                changes.signal();
                answers.signal();
            }
        }

        int pending() {
            state.lock();
            try {
                return pending;
            } finally {
                state.unlock();
            }
        }

        boolean subscribedOrPending() {
            state.lock();
            try {
                return subscribed || pending > 0;
            } finally {
                state.unlock();
            }
        }

        /** @return whether the server has confirmed the subscription and nothing is in flight */
        boolean confirmed() {
            state.lock();
            try {
                return pending == 0 && subscribed;
            } finally {
                state.unlock();
            }
        }

        /** @return the signal of notices and losses of the connection (closed with the subscriber) */
        ChangeSignal changes() {
            return changes;
        }

        /**
         * @return a stage that completes once the subscription is confirmed, at the next answer,
         *     notice or loss of the connection; complete already if it is confirmed (or the
         *     subscriber closed)
         */
        CompletableFuture<Void> confirmation() {
            long seen;
            state.lock();
            try {
                if (pending == 0 && subscribed) {
                    return CompletableFuture.completedFuture(null);
                }
                seen = answers.generation(); // read with the state it belongs to
            } finally {
                state.unlock();
            }
            return answers.changeAfter(seen);
        }
    }

    /**
     * Starts listening on a channel for one waiter; starts the connection if there is none.
     *
     * @return the topic to wait on and to pass to {@link #unregister}
     */
    Topic register(String channel) {
        lock.lock();
        try {
            if (closed) {
                Topic t = new Topic(channel);
                t.reset(true);
                return t;
            }
            Topic t = topics.computeIfAbsent(channel, Topic::new);
            t.refs++;
            Session s = session;
            if (t.refs == 1 && s != null && s.ready) {
                send(s, t, true);
            }
            ensureConnected();
            return t;
        } finally {
            lock.unlock();
        }
    }

    /** One waiter stopped listening on a topic. Idempotent per registration; never throws. */
    void unregister(Topic t) {
        lock.lock();
        try {
            if (topics.get(t.channel) != t || t.refs == 0) {
                return;
            }
            t.refs--;
            if (t.refs > 0) {
                return;
            }
            Session s = session;
            if (s != null && s.ready && t.subscribedOrPending()) {
                send(s, t, false);
            }
            if (t.pending() == 0) {
                topics.remove(t.channel);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Makes the connection again if there is none and the reconnect delay allows (else a later
     * turn does), and answers the topic's {@link Topic#confirmation()}.
     */
    CompletableFuture<Void> confirmation(Topic t) {
        ensureConnected();
        return t.confirmation();
    }

    /**
     * Makes the connection again if it is missing and the reconnect delay has passed.
     *
     * @return 0, or when the connection may next be made if it is missing and delayed now
     */
    long ensureConnected() {
        lock.lock();
        try {
            if (closed || session != null) {
                return 0;
            }
            long now = System.nanoTime();
            if (reconnectDelayed && now - reconnectAt < 0) {
                return reconnectAt;
            }
            Session s = new Session();
            try {
                Thread t = threads.newThread(() -> run(s));
                t.setDaemon(true);
                s.thread = t;
                session = s;
                t.start();
            } catch (RuntimeException | Error e) {
                session = null;
                delayReconnect();
                LOG.warn("dlock: cannot start the pub/sub thread for {}; waiters will poll", settings.address(), e);
                return reconnectAt;
            }
            return 0;
        } finally {
            lock.unlock();
        }
    }

    // guarded by lock: the connection is gone, every waiter learns it (and polls)
    private void resetTopics() {
        for (Topic t : new ArrayList<>(topics.values())) {
            t.reset(closed);
            if (t.refs == 0) {
                topics.remove(t.channel);
            }
        }
    }

    /**
     * Drops the connection at once, without the reconnect delay, so that the next wait connects
     * anew: the server it was made to is no longer the primary (Sentinel). Waiters are woken and
     * poll once. The old connection's thread ends on its own. Never throws.
     */
    void reconnect() {
        Session s;
        lock.lock();
        try {
            reconnectDelayed = false;
            s = session;
            if (closed || s == null) {
                return;
            }
            session = null;
            s.ready = false;
            resetTopics();
        } finally {
            lock.unlock();
        }
        s.closeSocket();
    }

    /** @return the number of channels with state, for tests of boundedness */
    int topicCount() {
        lock.lock();
        try {
            return topics.size();
        } finally {
            lock.unlock();
        }
    }

    private void delayReconnect() {
        reconnectDelayed = true;
        reconnectAt = System.nanoTime() + RECONNECT_DELAY_NANOS;
    }

    // guarded by lock
    private void send(Session s, Topic t, boolean subscribe) {
        try {
            if (subscribe) {
                s.pubSub.subscribe(t.channel);
            } else {
                s.pubSub.unsubscribe(t.channel);
            }
            t.sent();
        } catch (RuntimeException e) {
            // the reader will see the broken connection and clean up
            LOG.debug("dlock: pub/sub write to {} failed", settings.address(), e);
            s.closeSocket();
        }
    }

    private void run(Session s) {
        Connection connection = null;
        try {
            connection = new Connection(s, clientConfig);
            lock.lock();
            try {
                if (closed || session != s) {
                    return;
                }
            } finally {
                lock.unlock();
            }
            s.pubSub.proceed(connection, controlChannel);
        } catch (RuntimeException e) {
            if (!s.socketClosed()) {
                LOG.debug("dlock: pub/sub connection to {} ended; waiters poll until it is back", settings.address(), e);
            }
        } finally {
            s.closeSocket();
            if (connection != null) {
                try {
                    connection.disconnect();
                } catch (RuntimeException ignored) {
                    // the socket is closed already
                }
            }
            lock.lock();
            try {
                s.ready = false;
                if (session == s) {
                    session = null;
                    delayReconnect();
                    resetTopics();
                }
            } finally {
                lock.unlock();
            }
        }
    }

    @Override
    public void close() {
        Session s;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            s = session;
            for (Topic t : topics.values()) {
                t.reset(true);
            }
        } finally {
            lock.unlock();
        }
        if (s == null) {
            return;
        }
        s.closeSocket();
        Thread t = s.thread;
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(joinMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (t.isAlive()) {
                LOG.warn("dlock: the pub/sub thread {} for {} did not end within {} ms", t.getName(),
                        settings.address(), joinMillis);
            }
        }
    }

    /**
     * One pub/sub connection: its thread, its TCP socket (kept so that {@link #close()} can close
     * it without waiting on the protocol, TLS included) and its listener.
     */
    private final class Session implements JedisSocketFactory {
        final PubSub pubSub = new PubSub(this);
        Thread thread;
        boolean ready; // guarded by lock: the control channel is subscribed, so others may be sent
        private final ReentrantLock socketLock = new ReentrantLock();
        private Socket socket; // guarded by socketLock
        private boolean socketClosed; // guarded by socketLock

        @Override
        public Socket createSocket() {
            return socketFactory.createSocket(tcp -> {
                socketLock.lock();
                try {
                    if (!socketClosed) {
                        socket = tcp;
                        return;
                    }
                } finally {
                    socketLock.unlock();
                }
                closeQuietly(tcp);
                throw new JedisConnectionException("the subscriber is closing");
            });
        }

        void closeSocket() {
            Socket toClose;
            socketLock.lock();
            try {
                socketClosed = true;
                toClose = socket;
            } finally {
                socketLock.unlock();
            }
            if (toClose != null) {
                closeQuietly(toClose);
            }
        }

        boolean socketClosed() {
            socketLock.lock();
            try {
                return socketClosed;
            } finally {
                socketLock.unlock();
            }
        }

        private void closeQuietly(Socket s) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    /** The listener: replies and notices, on the reader thread. */
    private final class PubSub extends JedisPubSub {
        private final Session session;

        PubSub(Session session) {
            this.session = session;
        }

        @Override
        public void onSubscribe(String channel, int subscribedChannels) {
            lock.lock();
            try {
                if (ReleaseSubscriber.this.session != session) {
                    return;
                }
                if (controlChannel.equals(channel)) {
                    session.ready = true;
                    for (Topic t : topics.values()) {
                        if (t.refs > 0) {
                            send(session, t, true);
                        }
                    }
                    return;
                }
                Topic t = topics.get(channel);
                if (t != null) {
                    t.answered(true);
                    dropIfIdle(t);
                }
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void onUnsubscribe(String channel, int subscribedChannels) {
            lock.lock();
            try {
                if (ReleaseSubscriber.this.session != session) {
                    return;
                }
                Topic t = topics.get(channel);
                if (t != null) {
                    t.answered(false);
                    dropIfIdle(t);
                }
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void onMessage(String channel, String message) {
            Topic t;
            lock.lock();
            try {
                t = topics.get(channel);
            } finally {
                lock.unlock();
            }
            if (t != null) {
                t.message();
            }
        }

        // guarded by lock
        private void dropIfIdle(Topic t) {
            if (t.refs == 0 && t.pending() == 0) {
                if (t.subscribedOrPending()) {
                    // a subscribe answered after the last waiter left: take it back
                    send(session, t, false);
                } else {
                    topics.remove(t.channel);
                }
            }
        }
    }
}
