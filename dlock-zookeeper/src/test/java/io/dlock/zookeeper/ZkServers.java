package io.dlock.zookeeper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * Embedded standalone ZooKeeper servers for tests, on free loopback ports, with a short tick, and
 * the four-letter words tests ask servers with. Ensembles run as processes: {@link ZkEnsemble}.
 */
public final class ZkServers {

    /**
     * 200 ms: sessions may then last from 0.4 s (2 ticks) to 4 s (20 ticks), so tests can use
     * sessions of about 2-3 s and still expire them quickly.
     */
    public static final int TICK_MS = 200;

    private ZkServers() { }

    static {
        // check for empty container nodes every 500 ms instead of every minute, so tests see the clean-up
        System.setProperty("znode.container.checkIntervalMs", "500");
        // tests count watches per node with the wchp command
        System.setProperty("zookeeper.4lw.commands.whitelist", "*");
    }

    /** Starts a standalone server. */
    public static TestingServer standalone() {
        try {
            return new TestingServer(spec(), true);
        } catch (Exception e) {
            throw new IllegalStateException("could not start an embedded ZooKeeper server", e);
        }
    }

    private static InstanceSpec spec() {
        Map<String, Object> props = new HashMap<>();
        props.put("admin.enableServer", "false");
        return new InstanceSpec(null, -1, -1, -1, true, -1, TICK_MS, -1, props, "127.0.0.1");
    }

    /** @return the answer of a server to the {@code srvr} four-letter command, or "" if it does not answer */
    public static String srvr(int port) {
        return fourLetters(port, "srvr");
    }

    /** @return the answer of a server to a four-letter command, or "" if it does not answer */
    public static String fourLetters(int port, String command) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            s.setSoTimeout(2000);
            s.getOutputStream().write(command.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            return "";
        }
    }

    public static InetSocketAddress address(InstanceSpec spec) {
        return new InetSocketAddress("127.0.0.1", spec.getPort());
    }

    /** @return a loopback port on which nothing listens (it was free a moment ago) */
    public static int closedPort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
