package io.dlock.zookeeper;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.tck.ForeignServer;
import io.dlock.tck.ServerProcesses;
import io.dlock.tck.TestTiming;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A zookeeper:// URI that names a port where something else answers: open fails with
 * {@link LockBackendException} within about the operation timeout, says what it found, and its
 * clean-up neither extends that nor leaves threads behind. Each listener is real, on a free
 * loopback port.
 */
class WrongServiceTest {

    private static final Duration OP_TIMEOUT = Duration.ofSeconds(1);
    /**
     * The operation timeout (1 s) for the connection attempt, plus a bounded clean-up and a short
     * probe of the address, plus slack for a loaded 2-core machine. Without a bound the failure took
     * the session timeout (30 s) and more.
     */
    private static final Duration BOUND = Duration.ofSeconds(4);

    private final List<AutoCloseable> toClose = new CopyOnWriteArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
    }

    private static Set<Thread> clientThreads() {
        Set<Thread> out = new HashSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String n = t.getName();
            if (t.isAlive() && (n.startsWith("dlock-") || n.contains("SendThread") || n.contains("EventThread"))) {
                out.add(t);
            }
        }
        return out;
    }

    private void assertOpenFailsClearly(int port, String what) {
        assertOpenFails(port, what, "no ZooKeeper answered at 127.0.0.1:" + port, "check the port");
    }

    private void assertOpenFails(int port, String what, String... phrases) {
        Set<Thread> before = clientThreads();
        String hostPort = "127.0.0.1:" + port;
        LockClientConfig config = LockClientConfig.builder("zookeeper://" + hostPort).operationTimeout(OP_TIMEOUT).build();
        long start = System.nanoTime();
        LockBackendException e = TestTiming.assertThrowsWithin(LockBackendException.class, BOUND, () -> {
            LockClient c = LockClient.open(config);
            c.close();
        });
        System.out.println("zookeeper:// at " + what + ": failed in " + (System.nanoTime() - start) / 1_000_000
                + " ms: " + e.getMessage());
        for (String phrase : phrases) {
            assertTrue(e.getMessage().contains(phrase), what + ": " + e.getMessage());
        }
        // nothing listening, or something that never completes a handshake (as a paused server would
        // not): the server may yet come back, so this is retryable
        assertTrue(e.retryable(), what + ": " + e);
        // the clean-up ended the client's threads (ZooKeeper's included), not left them to time out
        TestTiming.await("the failed client's threads end", Duration.ofSeconds(5), () -> {
            Set<Thread> now = clientThreads();
            now.removeAll(before);
            return now.isEmpty();
        });
    }

    @Test
    void aPortWhereNothingListens() {
        int port = ServerProcesses.freeLoopbackPort();
        assertOpenFails(port, "a closed port", "no ZooKeeper answered at 127.0.0.1:" + port,
                "nothing listens there (connection refused)");
    }

    @Test
    void aListenerThatNeverAnswers() {
        ForeignServer l = ForeignServer.greeting(new byte[0]);
        toClose.add(l);
        assertOpenFailsClearly(l.port(), "a silent listener");
    }

    @Test
    void aListenerThatSendsGarbage() {
        ForeignServer l = ForeignServer.greeting(ForeignServer.garbage());
        toClose.add(l);
        assertOpenFailsClearly(l.port(), "a garbage listener");
    }

    @Test
    void anHttpServer() throws IOException {
        HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        http.createContext("/", ex -> {
            byte[] body = "not zookeeper".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(404, body.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        });
        http.start();
        toClose.add(() -> http.stop(0));
        assertOpenFailsClearly(http.getAddress().getPort(), "an HTTP server");
    }

    @Test
    void aRedisServer() throws Exception {
        int port = ServerProcesses.freeLoopbackPort();
        Process redis = new ProcessBuilder("redis-server", "--port", String.valueOf(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        toClose.add(() -> ServerProcesses.killAndWait(redis, "redis-server"));
        TestTiming.await("redis-server listens on " + port, Duration.ofSeconds(15), () -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return true;
            } catch (IOException notYet) {
                return !redis.isAlive() && fail("redis-server exited");
            }
        });
        assertOpenFailsClearly(port, "a Redis server");
    }

    private static boolean fail(String why) {
        throw new AssertionError(why);
    }
}
