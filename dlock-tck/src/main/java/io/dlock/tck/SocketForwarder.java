package io.dlock.tck;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Forwards stream connections between a TCP port and a Unix domain socket, for servers that run in
 * a network namespace of their own ({@link PeerNetwork}): a Unix socket is a file, reachable from
 * every namespace, where a TCP port is reachable only from its own. Two directions:
 * <ul>
 *   <li>{@link #toUnixSocket(Path)}: in the test JVM, a free {@code 127.0.0.1} port in front of a
 *       server's Unix socket, so clients get a plain {@code host:port} (the port stays the same
 *       across restarts of the server; while nothing listens on the socket, a new connection is
 *       accepted and closed at once, as a dead server's would end);</li>
 *   <li>{@link #fromUnixSocket(Path, InetSocketAddress)}: inside the server's namespace (in its own
 *       process), a Unix socket in front of a TCP port there, for servers that cannot serve
 *       clients on a Unix socket themselves.</li>
 * </ul>
 * Bytes are copied as they come, both ways, by two daemon threads per connection; when either side
 * ends, both are closed (no half-close: the protocols forwarded here never use it). Thread-safe.
 */
public final class SocketForwarder implements AutoCloseable {

    private static final AtomicInteger IDS = new AtomicInteger();

    private final ServerSocketChannel server;
    private final SocketAddress local;
    private final SocketAddress target;
    private final Path socketFile;
    private final Set<SocketChannel> open = ConcurrentHashMap.newKeySet();
    private final String name = "dlock-tck-forwarder-" + IDS.incrementAndGet();
    private volatile boolean closed;

    private SocketForwarder(ServerSocketChannel server, SocketAddress target, Path socketFile) throws IOException {
        this.server = server;
        this.local = server.getLocalAddress();
        this.target = target;
        this.socketFile = socketFile;
        Thread acceptor = new Thread(this::acceptLoop, name + "-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Listens on a free loopback port and forwards each connection to a Unix socket.
     *
     * @param socket the Unix socket to forward to (it need not exist yet)
     * @return the running forwarder
     * @throws UncheckedIOException if no port can be bound
     */
    public static SocketForwarder toUnixSocket(Path socket) {
        if (socket == null) {
            throw new IllegalArgumentException("socket must not be null");
        }
        try {
            ServerSocketChannel server = ServerSocketChannel.open();
            server.bind(new InetSocketAddress("127.0.0.1", 0), 50);
            return new SocketForwarder(server, UnixDomainSocketAddress.of(socket), null);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Listens on a Unix socket (replacing a stale file of that name) and forwards each connection
     * to a TCP address. The file is deleted on {@link #close()}.
     *
     * @param socket the Unix socket to listen on
     * @param target where to forward to, e.g. a server's port on {@code 127.0.0.1}
     * @return the running forwarder
     * @throws UncheckedIOException if the socket cannot be bound
     */
    public static SocketForwarder fromUnixSocket(Path socket, InetSocketAddress target) {
        if (socket == null) {
            throw new IllegalArgumentException("socket must not be null");
        }
        if (target == null) {
            throw new IllegalArgumentException("target must not be null");
        }
        try {
            Files.deleteIfExists(socket);
            ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            server.bind(UnixDomainSocketAddress.of(socket), 50);
            return new SocketForwarder(server, target, socket);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Returns the loopback address clients connect to.
     *
     * @return the address
     * @throws IllegalStateException if this forwarder listens on a Unix socket
     */
    public InetSocketAddress address() {
        if (local instanceof InetSocketAddress) {
            return (InetSocketAddress) local;
        }
        throw new IllegalStateException(this + " listens on a Unix socket, not on a port");
    }

    /**
     * Returns the loopback port clients connect to.
     *
     * @return the port
     * @throws IllegalStateException if this forwarder listens on a Unix socket
     */
    public int port() {
        return address().getPort();
    }

    /** Closes every forwarded connection, as a server that dies does; new ones are still accepted. */
    public void cutConnections() {
        for (SocketChannel c : open) {
            closeQuietly(c);
        }
        open.clear();
    }

    /** Stops listening and closes every forwarded connection. */
    @Override
    public void close() {
        closed = true;
        closeQuietly(server);
        cutConnections();
        if (socketFile != null) {
            try {
                Files.deleteIfExists(socketFile);
            } catch (IOException ignored) {
                // a stale socket file is harmless: the next bind replaces it
            }
        }
    }

    private void acceptLoop() {
        while (!closed) {
            SocketChannel client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return;
            }
            SocketChannel upstream;
            try {
                noDelay(client);
                upstream = SocketChannel.open(target);
                noDelay(upstream);
            } catch (IOException e) {
                closeQuietly(client); // nothing serves there: the client sees the connection end
                continue;
            }
            open.add(client);
            open.add(upstream);
            pump(client, upstream, "-up");
            pump(upstream, client, "-down");
        }
    }

    private static void noDelay(SocketChannel c) throws IOException {
        if (c.getLocalAddress() instanceof InetSocketAddress) {
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
        }
    }

    private void pump(SocketChannel from, SocketChannel to, String direction) {
        Thread t = new Thread(() -> {
            ByteBuffer b = ByteBuffer.allocate(16384);
            try {
                while (from.read(b) >= 0) {
                    b.flip();
                    while (b.hasRemaining()) {
                        to.write(b);
                    }
                    b.clear();
                }
            } catch (IOException e) {
                // either side closed
            } finally {
                end(from, to);
            }
        }, name + direction);
        t.setDaemon(true);
        t.start();
    }

    /** Either side ended: end both. */
    private void end(SocketChannel a, SocketChannel b) {
        open.remove(a);
        open.remove(b);
        closeQuietly(a);
        closeQuietly(b);
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
        return "SocketForwarder{" + local + " -> " + target + "}";
    }
}
