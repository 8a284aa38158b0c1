package io.dlock.cli;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Properties;
import java.util.stream.Stream;
import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;

/**
 * A real, standalone ZooKeeper server inside this JVM (ZooKeeper's own embedded server), on a free
 * loopback port, with its data in a temporary directory that {@link #close()} deletes: the backend
 * the demo needs no set-up for, and the one the CLI's tests run against.
 *
 * <p>The tick is 250 ms, so the server grants sessions of 0.5 to 5 seconds: short enough that an
 * expired lease is seen within seconds.
 */
final class EmbeddedZooKeeper implements AutoCloseable {

    /** The server's tick; sessions may last 2 to 20 ticks. */
    public static final Duration TICK = Duration.ofMillis(250);

    private final Path dir;
    private final int port;
    private final ZooKeeperServerEmbedded server;
    private boolean closed;

    private EmbeddedZooKeeper(Path dir, int port, ZooKeeperServerEmbedded server) {
        this.dir = dir;
        this.port = port;
        this.server = server;
    }

    /**
     * Starts a server on a free loopback port.
     *
     * @param startTimeout how long to wait for it to serve
     * @return the running server
     * @throws IllegalStateException if it does not start
     */
    public static EmbeddedZooKeeper start(Duration startTimeout) {
        Path dir;
        try {
            dir = Files.createTempDirectory("dlock-zk-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a directory for the embedded ZooKeeper server", e);
        }
        RuntimeException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            int port = freePort();
            Properties config = new Properties();
            config.setProperty("tickTime", Long.toString(TICK.toMillis()));
            config.setProperty("dataDir", dir.resolve("data-" + attempt).toString());
            config.setProperty("clientPort", Integer.toString(port));
            config.setProperty("clientPortAddress", "127.0.0.1");
            config.setProperty("admin.enableServer", "false");
            config.setProperty("4lw.commands.whitelist", "srvr,ruok");
            try {
                ZooKeeperServerEmbedded server = ZooKeeperServerEmbedded.builder().baseDir(dir)
                        .configuration(config).exitHandler(ExitHandler.LOG_ONLY).build();
                server.start(startTimeout.toMillis());
                awaitServing(port, startTimeout);
                return new EmbeddedZooKeeper(dir, port, server);
            } catch (Exception e) {
                last = new IllegalStateException("the embedded ZooKeeper server did not start on 127.0.0.1:" + port
                        + ": " + e, e); // most likely the port was taken meanwhile: try another
            }
        }
        delete(dir);
        throw last;
    }

    private static void awaitServing(int port, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException e) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("nothing listens on 127.0.0.1:" + port, e);
                }
                Thread.sleep(20);
            }
        }
    }

    /** @return the client port on 127.0.0.1 */
    public int port() {
        return port;
    }

    /** @return {@code 127.0.0.1:PORT} */
    public String connectString() {
        return "127.0.0.1:" + port;
    }

    /**
     * Returns a dlock URI for this server.
     *
     * @param sessionTimeout the session each client asks for (0.5 to 5 s); leases may not be longer
     * @return {@code zookeeper://127.0.0.1:PORT?sessionTimeout=...}
     */
    public String uri(Duration sessionTimeout) {
        return "zookeeper://" + connectString() + "?sessionTimeout=" + sessionTimeout;
    }

    /** Stops the server (clients see the connection drop) and deletes its data. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            server.close();
        } finally {
            delete(dir);
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException | UncheckedIOException ignored) {
            // a temporary directory left behind is harmless
        }
    }

    @Override
    public String toString() {
        return "EmbeddedZooKeeper{" + connectString() + "}";
    }
}
