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
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-JVM TCP proxy on a free loopback port, in front of one server, that can freeze traffic:
 * while frozen, bytes read from either side are held and not forwarded (so the peers see a
 * stalled network, not a closed one); on unfreeze they are delivered, late. It also counts round
 * trips: on each connection, every burst of client bytes that follows the server's last answer
 * (or opens the connection) is one request round trip, so pipelined requests count once.
 * Thread-safe.
 */
public final class TcpProxy implements AutoCloseable {

    private static final AtomicInteger IDS = new AtomicInteger();

    private final InetSocketAddress target;
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private final String name = "dlock-tck-proxy-" + IDS.incrementAndGet();
    private final AtomicLong roundTrips = new AtomicLong();
    private volatile boolean frozen;
    private volatile boolean closed;

    private TcpProxy(InetSocketAddress target) throws IOException {
        this.target = target;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::acceptLoop, name + "-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Starts a proxy in front of a server.
     *
     * @param target the server
     * @return the running proxy
     * @throws UncheckedIOException if no port could be bound
     */
    public static TcpProxy start(InetSocketAddress target) {
        try {
            return new TcpProxy(target);
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
     * connection) starts one. Counting happens as bytes are read, so a reader should let traffic
     * settle before reading a difference.
     *
     * @return the count since the proxy started
     */
    public long roundTrips() {
        return roundTrips.get();
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
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        sockets.clear();
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
            Thread t = new Thread(() -> connect(client), name + "-connect");
            t.setDaemon(true);
            t.start();
        }
    }

    private void connect(Socket client) {
        Socket upstream = new Socket();
        try {
            sockets.add(client);
            awaitThaw();
            upstream.connect(target, 5000);
            sockets.add(upstream);
            client.setTcpNoDelay(true);
            upstream.setTcpNoDelay(true);
            // true while the client spoke last on this connection
            AtomicBoolean clientSpokeLast = new AtomicBoolean();
            pump(client, upstream, "up", clientSpokeLast);
            pump(upstream, client, "down", clientSpokeLast);
        } catch (IOException e) {
            closeQuietly(client);
            closeQuietly(upstream);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeQuietly(client);
            closeQuietly(upstream);
        }
    }

    private void pump(Socket from, Socket to, String direction, AtomicBoolean clientSpokeLast) {
        boolean up = direction.equals("up");
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream()) {
                OutputStream out = to.getOutputStream();
                int n;
                while ((n = in.read(buf)) >= 0) {
                    if (up) {
                        if (!clientSpokeLast.getAndSet(true)) {
                            roundTrips.incrementAndGet();
                        }
                    } else {
                        clientSpokeLast.set(false);
                    }
                    awaitThaw();
                    out.write(buf, 0, n);
                    out.flush();
                }
                awaitThaw();
                to.shutdownOutput();
            } catch (SocketException e) {
                closeQuietly(to);
            } catch (IOException e) {
                closeQuietly(to);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                closeQuietly(to);
            }
        }, name + "-" + direction);
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // closing; nothing to do
        }
    }
}
