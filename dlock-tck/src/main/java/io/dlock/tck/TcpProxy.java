package io.dlock.tck;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-JVM TCP proxy on a free loopback port, in front of one server, that can freeze traffic:
 * while frozen, bytes read from either side are held and not forwarded (so the peers see a
 * stalled network, not a closed one); on unfreeze they are delivered, late. It also counts round
 * trips: on each connection, every burst of client bytes that follows the server's last answer
 * (or opens the connection) is one request round trip, so pipelined requests count once.
 *
 * <p>It injects every {@link NetworkFault} kind through {@link #inject(NetworkFault)} and
 * {@link #heal()}, with the meaning the enum gives, on every connection, new ones included. The
 * proxy's side of a connection is a client-side socket to the server and the accepted socket from
 * the client: "requests" flow client to server, "answers" server to client.
 *
 * <p>Resources are bounded per connection. While frozen, a direction holds the one chunk it read
 * (at most {@value #CHUNK} bytes) and reads no more, so the sender's TCP window fills. Under
 * {@link NetworkFault#LATENCY} a direction queues at most {@value #MAX_DELAYED} bytes plus one chunk
 * and stops reading beyond that until the head of the queue is due; the sender then blocks as over
 * a slow link. Dropped bytes and the bytes sent into a black-holed connection are discarded as
 * they are read. Threads: one per direction of every connection, plus a short-lived one that
 * connects it upstream (under {@link NetworkFault#BLACK_HOLE} that one reads and discards instead,
 * and nothing is connected upstream), and one accepting; all are daemons named
 * {@code dlock-tck-proxy-N-...}. Delays are kept with a per-direction queue that the direction's
 * own thread serves between reads, so order within a connection is preserved. Thread-safe.
 */
public final class TcpProxy implements AutoCloseable {

    /** The most bytes read in one go, so the largest chunk one direction holds while frozen. */
    public static final int CHUNK = 16384;

    /** The most bytes one direction of one connection keeps queued under LATENCY before it stops reading. */
    public static final int MAX_DELAYED = 256 * 1024;

    private static final AtomicInteger IDS = new AtomicInteger();

    private final InetSocketAddress target;
    private final ServerSocket server;
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    private final Object gate = new Object();
    /** Serializes {@link #inject} and {@link #heal}. */
    private final Object control = new Object();
    /** Guards {@link #fault}, {@link #random} and every connection's fault marks; see {@link #admit}. */
    private final Object faults = new Object();
    private final String name = "dlock-tck-proxy-" + IDS.incrementAndGet();
    private final AtomicLong roundTrips = new AtomicLong();
    private volatile boolean frozen;
    private volatile boolean closed;
    /** The lasting fault other than FREEZE (which is {@link #frozen}), or null; guarded by {@link #faults}. */
    private NetworkFault fault;
    private SplittableRandom random; // guarded by faults

    private TcpProxy(InetSocketAddress target, long seed) throws IOException {
        this.target = target;
        this.random = new SplittableRandom(seed);
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::acceptLoop, name + "-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Starts a proxy in front of a server; {@link NetworkFault#LATENCY}'s delays are drawn from
     * {@link NetworkFault#defaultSeed()}.
     *
     * @param target the server
     * @return the running proxy
     * @throws UncheckedIOException if no port could be bound
     */
    public static TcpProxy start(InetSocketAddress target) {
        return start(target, NetworkFault.defaultSeed());
    }

    /**
     * Starts a proxy in front of a server.
     *
     * @param target the server
     * @param seed the seed of {@link NetworkFault#LATENCY}'s delays
     * @return the running proxy
     * @throws IllegalArgumentException if {@code target} is null
     * @throws UncheckedIOException if no port could be bound
     */
    public static TcpProxy start(InetSocketAddress target, long seed) {
        if (target == null) {
            throw new IllegalArgumentException("target must not be null");
        }
        try {
            return new TcpProxy(target, seed);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return where clients should connect */
    public InetSocketAddress address() {
        return new InetSocketAddress(server.getInetAddress(), server.getLocalPort());
    }

    /**
     * The round trips clients started through this proxy so far, over all connections: a burst
     * of bytes from a client that follows bytes from the server (or is the first on its
     * connection) starts one. Counting happens as bytes are read (dropped ones included; the
     * bytes a black hole swallows are not read by a forwarding connection and do not count), so a
     * reader should let traffic settle before reading a difference.
     *
     * @return the count since the proxy started
     */
    public long roundTrips() {
        return roundTrips.get();
    }

    /**
     * Reseeds the source of {@link NetworkFault#LATENCY}'s delays.
     *
     * @param seed the new seed
     */
    public void latencySeed(long seed) {
        synchronized (faults) {
            random = new SplittableRandom(seed);
        }
    }

    /** Holds back all traffic, both ways, on every connection, including new ones. */
    public void freeze() {
        frozen = true;
    }

    /** Delivers what was held back and lets traffic flow again. */
    public void unfreeze() {
        synchronized (gate) {
            frozen = false;
            gate.notifyAll();
        }
    }

    /** Closes every connection abruptly, as a crashed network peer would. */
    public void cutConnections() {
        for (Connection c : connections) {
            c.cut();
        }
    }

    /**
     * Resets every open connection: both sockets are closed with {@code SO_LINGER} 0, so the
     * client and the server each see a reset (RST), not an orderly end of stream. New connections
     * are accepted as usual.
     */
    public void resetConnections() {
        for (Connection c : connections) {
            c.reset();
        }
    }

    /**
     * Injects a fault, as {@link NetworkFault} defines each kind, on every connection, new ones
     * included; it lasts until {@link #heal()} (except {@link NetworkFault#RESET}, one event). The
     * current fault is healed first.
     *
     * @param kind the fault
     * @throws IllegalArgumentException if {@code kind} is null
     */
    public void inject(NetworkFault kind) {
        if (kind == null) {
            throw new IllegalArgumentException("kind must not be null");
        }
        synchronized (control) {
            heal();
            switch (kind) {
                case FREEZE -> freeze();
                case RESET -> resetConnections();
                case BLACK_HOLE -> {
                    setFault(kind);
                    cutConnections();
                }
                default -> setFault(kind);
            }
        }
    }

    private void setFault(NetworkFault kind) {
        synchronized (faults) {
            fault = kind;
        }
    }

    /**
     * Ends the current fault: connections that lost bytes (to a drop, or that a black hole
     * accepted) are reset, delays stop being added (chunks already delayed still arrive, in
     * order), and what a freeze held is delivered.
     */
    public void heal() {
        synchronized (control) {
            synchronized (faults) {
                fault = null;
                for (Connection c : connections) {
                    if (c.lostBytes) {
                        c.reset();
                    }
                }
            }
            unfreeze();
        }
    }

    @Override
    public void close() {
        closed = true;
        unfreeze();
        closeQuietly(server);
        cutConnections();
    }

    private void awaitThaw() throws InterruptedException {
        synchronized (gate) {
            while (frozen && !closed) {
                gate.wait(100);
            }
        }
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return;
            }
            Connection c = new Connection(client);
            connections.add(c);
            if (closed) {
                c.cut();
                return;
            }
            Thread t = new Thread(() -> connect(c), name + "-connect");
            t.setDaemon(true);
            t.start();
        }
    }

    private void connect(Connection c) {
        try {
            awaitThaw();
            if (c.swallowedByBlackHole()) {
                swallow(c);
                return;
            }
            c.upstream.connect(target, 5000);
            c.client.setTcpNoDelay(true);
            c.upstream.setTcpNoDelay(true);
            pump(c, true);
            pump(c, false);
        } catch (IOException e) {
            c.cut();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            c.cut();
        }
    }

    /** A black-holed connection: read and discard until the client or a heal ends it. */
    private void swallow(Connection c) {
        byte[] buf = new byte[CHUNK];
        try (InputStream in = c.client.getInputStream()) {
            while (in.read(buf) >= 0) {
                // discarded: nothing reaches the server, nothing is answered
            }
        } catch (IOException e) {
            // reset by heal, or closed
        } finally {
            c.cut();
        }
    }

    /**
     * Decides the fate of a chunk just read: dropped (-1), or forwarded after a delay in
     * nanoseconds (0 for none). Taken under the same lock as {@link #heal()}, so a connection that
     * lost bytes is always among those heal resets.
     */
    private long admit(Connection c, boolean up) {
        synchronized (faults) {
            NetworkFault f = fault;
            if (f == NetworkFault.DROP || f == NetworkFault.BLACK_HOLE
                    || f == (up ? NetworkFault.DROP_REQUESTS : NetworkFault.DROP_ANSWERS)) {
                c.lostBytes = true;
                return -1;
            }
            return f == NetworkFault.LATENCY ? NetworkFault.drawLatency(random).toNanos() : 0;
        }
    }

    private record Chunk(byte[] bytes, long due) { }

    private void pump(Connection c, boolean up) {
        Socket from = up ? c.client : c.upstream;
        Socket to = up ? c.upstream : c.client;
        Thread t = new Thread(() -> {
            byte[] buf = new byte[CHUNK];
            ArrayDeque<Chunk> delayed = new ArrayDeque<>();
            int delayedBytes = 0;
            long lastDue = 0; // of the newest delayed chunk; meaningful while delayed is not empty
            int soTimeout = 0;
            try (InputStream in = from.getInputStream()) {
                OutputStream out = to.getOutputStream();
                boolean eof = false;
                while (true) {
                    if (!delayed.isEmpty()) {
                        awaitThaw();
                        long now = System.nanoTime();
                        boolean wrote = false;
                        while (!delayed.isEmpty() && delayed.peek().due() - now <= 0) {
                            Chunk ch = delayed.poll();
                            out.write(ch.bytes());
                            delayedBytes -= ch.bytes().length;
                            wrote = true;
                        }
                        if (wrote) {
                            out.flush();
                        }
                    }
                    if (eof || delayedBytes >= MAX_DELAYED) {
                        if (delayed.isEmpty()) { // only at the end of the stream: delayedBytes is 0
                            awaitThaw();
                            to.shutdownOutput();
                            return;
                        }
                        sleepUntil(delayed.peek().due());
                        continue;
                    }
                    // with chunks waiting, read only until the first is due
                    int timeout = delayed.isEmpty() ? 0 : millisUntil(delayed.peek().due());
                    if (timeout != soTimeout) {
                        from.setSoTimeout(timeout);
                        soTimeout = timeout;
                    }
                    int n;
                    try {
                        n = in.read(buf);
                    } catch (SocketTimeoutException e) {
                        continue; // the socket stays usable: deliver what is due
                    }
                    if (n < 0) {
                        if (admit(c, up) < 0) {
                            return; // the end of stream is lost too: the peer sees silence until a heal resets it
                        }
                        eof = true;
                        continue;
                    }
                    if (up) {
                        if (!c.clientSpokeLast.getAndSet(true)) {
                            roundTrips.incrementAndGet();
                        }
                    } else {
                        c.clientSpokeLast.set(false);
                    }
                    long delay = admit(c, up);
                    if (delay < 0) {
                        continue;
                    }
                    if (delay == 0 && delayed.isEmpty()) {
                        awaitThaw();
                        out.write(buf, 0, n);
                        out.flush();
                    } else {
                        // never before a chunk read earlier: order within the connection holds
                        long due = System.nanoTime() + delay;
                        if (!delayed.isEmpty() && due - lastDue < 0) {
                            due = lastDue;
                        }
                        lastDue = due;
                        delayed.add(new Chunk(Arrays.copyOf(buf, n), due));
                        delayedBytes += n;
                    }
                }
            } catch (SocketException e) {
                closeQuietly(to);
            } catch (IOException e) {
                closeQuietly(to);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                closeQuietly(to);
            } finally {
                c.pumpEnded();
            }
        }, name + "-" + (up ? "up" : "down"));
        t.setDaemon(true);
        t.start();
    }

    private static int millisUntil(long due) {
        long ms = TimeUnit.NANOSECONDS.toMillis(due - System.nanoTime() + 999_999);
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, ms));
    }

    private static void sleepUntil(long due) throws InterruptedException {
        long ns = due - System.nanoTime();
        if (ns > 0) {
            TimeUnit.NANOSECONDS.sleep(ns);
        }
    }

    /** One client's connection through the proxy: the accepted socket and the one to the server. */
    private final class Connection {
        final Socket client;
        final Socket upstream = new Socket();
        /** True while the client spoke last on this connection. */
        final AtomicBoolean clientSpokeLast = new AtomicBoolean();
        private final AtomicInteger pumps = new AtomicInteger(2);
        /** Bytes were dropped, or a black hole took the connection: heal resets it. Guarded by faults. */
        boolean lostBytes;

        Connection(Socket client) {
            this.client = client;
        }

        /** @return whether a black hole is in force; if so the connection is marked for reset on heal */
        boolean swallowedByBlackHole() {
            synchronized (faults) {
                if (fault == NetworkFault.BLACK_HOLE) {
                    lostBytes = true;
                    return true;
                }
                return false;
            }
        }

        void pumpEnded() {
            if (pumps.decrementAndGet() == 0) {
                connections.remove(this);
            }
        }

        void cut() {
            connections.remove(this);
            closeQuietly(client);
            closeQuietly(upstream);
        }

        void reset() {
            connections.remove(this);
            // both sockets linger 0 before either closes: a pump that sees one close and closes
            // the other then resets it too, instead of ending it with a FIN
            lingerZero(client);
            lingerZero(upstream);
            closeQuietly(client);
            closeQuietly(upstream);
        }
    }

    private static void lingerZero(Socket s) {
        try {
            if (!s.isClosed()) {
                s.setSoLinger(true, 0);
            }
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // closing; nothing to do
        }
    }
}
