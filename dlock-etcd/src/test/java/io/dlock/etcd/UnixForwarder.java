package io.dlock.etcd;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Forwards TCP connections on a free loopback port to a Unix domain socket, for tests. A member
 * of an {@link EtcdCluster} that runs in its own network namespace serves its clients on a Unix
 * socket (a file, reachable from every namespace), and this gives the test's clients a plain
 * {@code 127.0.0.1:port} for it. The port stays the same across restarts of the member; while the
 * member is down, a new connection is accepted and closed at once. Thread-safe.
 */
final class UnixForwarder implements AutoCloseable {

    private static final AtomicInteger IDS = new AtomicInteger();

    private final Path socket;
    private final ServerSocket server;
    private final Set<AutoCloseable> open = ConcurrentHashMap.newKeySet();
    private final String name = "etcd-test-forwarder-" + IDS.incrementAndGet();
    private volatile boolean closed;

    /**
     * Starts forwarding.
     *
     * @param socket the Unix socket to forward to (it need not exist yet)
     */
    UnixForwarder(Path socket) {
        this.socket = socket;
        try {
            this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread acceptor = new Thread(this::acceptLoop, name + "-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** @return the loopback address clients connect to */
    InetSocketAddress address() {
        return new InetSocketAddress(server.getInetAddress(), server.getLocalPort());
    }

    int port() {
        return server.getLocalPort();
    }

    /** Closes every forwarded connection, as a member that dies does. */
    void cutConnections() {
        for (AutoCloseable c : open) {
            closeQuietly(c);
        }
        open.clear();
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(server);
        cutConnections();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return;
            }
            SocketChannel upstream;
            try {
                client.setTcpNoDelay(true);
                upstream = SocketChannel.open(UnixDomainSocketAddress.of(socket));
            } catch (IOException e) {
                closeQuietly(client); // the member is not serving: the client sees the connection end
                continue;
            }
            open.add(client);
            open.add(upstream);
            pump(client, upstream);
        }
    }

    private void pump(Socket client, SocketChannel upstream) {
        Thread up = new Thread(() -> {
            byte[] buf = new byte[16384];
            try {
                InputStream in = client.getInputStream();
                int n;
                while ((n = in.read(buf)) >= 0) {
                    ByteBuffer b = ByteBuffer.wrap(buf, 0, n);
                    while (b.hasRemaining()) {
                        upstream.write(b);
                    }
                }
            } catch (IOException e) {
                // either side closed
            } finally {
                end(client, upstream);
            }
        }, name + "-up");
        Thread down = new Thread(() -> {
            ByteBuffer b = ByteBuffer.allocate(16384);
            try {
                OutputStream out = client.getOutputStream();
                while (upstream.read(b) >= 0) {
                    out.write(b.array(), 0, b.position());
                    out.flush();
                    b.clear();
                }
            } catch (IOException e) {
                // either side closed
            } finally {
                end(client, upstream);
            }
        }, name + "-down");
        up.setDaemon(true);
        down.setDaemon(true);
        up.start();
        down.start();
    }

    /** Either side ended: end both (gRPC and the tests' HTTP/1.0 requests never half-close). */
    private void end(Socket client, SocketChannel upstream) {
        open.remove(client);
        open.remove(upstream);
        closeQuietly(client);
        closeQuietly(upstream);
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // closing; nothing to do
        }
    }

    @Override
    public String toString() {
        return "UnixForwarder{" + address() + " -> " + socket + "}";
    }
}
