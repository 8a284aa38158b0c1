package io.dlock.tck;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The proxy against a real server on a loopback port: its round-trip count, its freeze, and every
 * {@link NetworkFault} kind as the enum defines it. The server side of each connection is a plain
 * socket the test reads and writes itself, so each direction can be checked on its own.
 *
 * <p>"Nothing arrives" is checked by a read that times out after {@link #SILENCE}: on loopback an
 * unimpeded byte arrives in well under a millisecond, so 300 ms of silence can only be the fault.
 */
class TcpProxyTest {

    private static final int SILENCE = 300;
    /** How long a test waits for something that should happen at once: generous for a loaded machine. */
    private static final int PROMPT = 5000;

    private ServerSocket listener;
    private final BlockingQueue<Socket> accepted = new LinkedBlockingQueue<>();
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private TcpProxy proxy;

    @BeforeEach
    void startServer() throws IOException {
        listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> {
            while (true) {
                try {
                    Socket s = listener.accept();
                    s.setTcpNoDelay(true);
                    accepted.add(s);
                } catch (IOException e) {
                    return; // closed after the test
                }
            }
        }, "test-server-accept");
        t.setDaemon(true);
        t.start();
        proxy = TcpProxy.start(new InetSocketAddress(listener.getInetAddress(), listener.getLocalPort()), 42);
    }

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        listener.close();
        for (AutoCloseable c : toClose) {
            c.close();
        }
        for (Socket s : accepted) {
            s.close();
        }
    }

    /** @return a client connected through the proxy */
    private Socket connect() throws IOException {
        Socket s = new Socket(proxy.address().getAddress(), proxy.address().getPort());
        s.setTcpNoDelay(true);
        toClose.add(s);
        return s;
    }

    /** @return the server's side of the next connection the proxy made */
    private Socket serverSide() throws InterruptedException {
        Socket s = accepted.poll(PROMPT, TimeUnit.MILLISECONDS);
        assertTrue(s != null, "the proxy connected to the server");
        toClose.add(s);
        return s;
    }

    /** @return a client connected through the proxy, and the server's side of it, with one byte each way checked */
    private Socket[] pair() throws Exception {
        Socket c = connect();
        Socket s = serverSide();
        send(c, "hi");
        assertEquals("hi", receive(s, 2));
        send(s, "ho");
        assertEquals("ho", receive(c, 2));
        return new Socket[] {c, s};
    }

    private static void send(Socket s, String text) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(text.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        out.flush();
    }

    private static String receive(Socket s, int length) throws IOException {
        s.setSoTimeout(PROMPT);
        byte[] b = new byte[length];
        new DataInputStream(s.getInputStream()).readFully(b);
        return new String(b, java.nio.charset.StandardCharsets.US_ASCII);
    }

    private static void assertSilent(Socket s, String what) throws IOException {
        s.setSoTimeout(SILENCE);
        try {
            int b = s.getInputStream().read();
            fail(what + ": expected nothing for " + SILENCE + " ms, read " + b);
        } catch (SocketTimeoutException expected) {
            // nothing arrived and the connection is still open
        }
    }

    private static void assertReset(Socket s, String what) throws IOException {
        s.setSoTimeout(PROMPT);
        try {
            int b = s.getInputStream().read();
            fail(what + ": expected a reset connection, read " + b + (b < 0 ? " (an orderly end of stream)" : ""));
        } catch (SocketException e) {
            assertTrue(e.getMessage() != null && e.getMessage().toLowerCase(Locale.ROOT).contains("reset"),
                    what + ": expected 'Connection reset', got " + e);
        }
    }

    private static void assertEnded(Socket s, String what) throws IOException {
        s.setSoTimeout(PROMPT);
        try {
            int b = s.getInputStream().read();
            assertEquals(-1, b, what + ": expected the connection to end");
        } catch (SocketException e) {
            // cut: ended too
        }
    }

    @Test
    void countsOneRoundTripPerRequestAndOneForPipelinedRequests() throws Exception {
        Socket client = connect();
        Socket server = serverSide();
        echoEvery4Bytes(server);
        OutputStream out = client.getOutputStream();
        DataInputStream in = new DataInputStream(client.getInputStream());
        byte[] answer = new byte[4];
        for (int i = 0; i < 3; i++) {
            out.write(new byte[] {1, 2, 3, 4});
            out.flush();
            in.readFully(answer); // the answer has come back: the next write is a new round trip
        }
        // two requests sent before either answer is read: pipelined, one round trip
        out.write(new byte[] {1, 2});
        out.write(new byte[] {3, 4});
        out.flush();
        in.readFully(answer);
        TestTiming.await("4 round trips counted", Duration.ofSeconds(5), () -> proxy.roundTrips() == 4);
        assertEquals(4, proxy.roundTrips());
    }

    @Test
    void freezeHoldsBytesBothWaysAndUnfreezeDeliversThem() throws Exception {
        Socket[] p = pair();
        proxy.freeze();
        send(p[0], "req");
        send(p[1], "ans");
        assertSilent(p[1], "a request while frozen");
        assertSilent(p[0], "an answer while frozen");
        Socket late = connect(); // accepted, but not connected upstream while frozen
        assertNull(accepted.poll(SILENCE, TimeUnit.MILLISECONDS), "a new connection reached the server while frozen");
        proxy.unfreeze();
        assertEquals("req", receive(p[1], 3));
        assertEquals("ans", receive(p[0], 3));
        Socket lateServer = serverSide();
        send(late, "ok");
        assertEquals("ok", receive(lateServer, 2));
    }

    @Test
    void dropLosesBytesBothWaysAndHealResetsTheConnectionsThatLostBytes() throws Exception {
        Socket[] p = pair();
        Socket[] untouched = pair(); // loses nothing: survives the heal
        Socket[] closing = pair();
        proxy.inject(NetworkFault.DROP);
        send(p[0], "req");
        send(p[1], "ans");
        assertSilent(p[1], "a request under DROP");
        assertSilent(p[0], "an answer under DROP");
        closing[0].shutdownOutput();
        assertSilent(closing[1], "an end of stream under DROP"); // lost as well: no FIN reaches the server
        proxy.heal();
        assertReset(p[0], "the client's connection after heal");
        assertReset(p[1], "the server's connection after heal");
        assertReset(closing[1], "the server's side of a connection whose end was lost, after heal");
        send(untouched[0], "a");
        assertEquals("a", receive(untouched[1], 1));
        pair(); // a new connection works
    }

    @Test
    void dropAnswersDeliversRequestsLosesAnswersAndHealResetsTheClient() throws Exception {
        Socket[] p = pair();
        proxy.inject(NetworkFault.DROP_ANSWERS);
        send(p[0], "req");
        assertEquals("req", receive(p[1], 3), "the server receives the request");
        send(p[1], "ans");
        assertSilent(p[0], "the answer under DROP_ANSWERS");
        proxy.heal();
        assertReset(p[0], "the client's connection after heal");
    }

    @Test
    void dropRequestsLosesRequestsDeliversAnswersAndHealResetsTheConnection() throws Exception {
        Socket[] p = pair();
        proxy.inject(NetworkFault.DROP_REQUESTS);
        send(p[1], "ans");
        assertEquals("ans", receive(p[0], 3), "the client receives what the server sends");
        send(p[0], "req");
        assertSilent(p[1], "a request under DROP_REQUESTS");
        proxy.heal();
        assertReset(p[0], "the client's connection after heal");
        assertReset(p[1], "the server's connection after heal");
    }

    @Test
    void resetSendsRstToBothPeersAndNewConnectionsWork() throws Exception {
        Socket[] p = pair();
        proxy.inject(NetworkFault.RESET);
        assertReset(p[0], "the client after RESET");
        assertReset(p[1], "the server after RESET");
        pair(); // accepted and forwarded as usual, without a heal
    }

    @Test
    void latencyDelaysEachWayAndKeepsOrderOverManyChunks() throws Exception {
        Socket client = connect();
        Socket server = serverSide();
        echoEvery4Bytes(server);
        DataOutputStream out = new DataOutputStream(client.getOutputStream());
        DataInputStream in = new DataInputStream(client.getInputStream());
        client.setSoTimeout(PROMPT * 2);
        proxy.inject(NetworkFault.LATENCY);
        long start = System.nanoTime();
        out.writeInt(-1);
        out.flush();
        assertEquals(-1, in.readInt());
        long roundTrip = System.nanoTime() - start;
        assertTrue(roundTrip >= 2 * NetworkFault.MIN_LATENCY.toNanos(),
                "a round trip under LATENCY took " + roundTrip / 1_000_000 + " ms, less than twice the least delay");
        // two delays of at most 500 ms; the rest is slack for a loaded machine
        assertTrue(roundTrip < TimeUnit.SECONDS.toNanos(5), "a round trip under LATENCY took " + roundTrip / 1_000_000 + " ms");

        // many small chunks, written apart so that each is read (and delayed) on its own: each draws
        // its own delay, yet they must come back in the order sent
        int chunks = 200;
        Thread writer = new Thread(() -> {
            try {
                for (int i = 0; i < chunks; i++) {
                    out.writeInt(i);
                    out.flush();
                    if (i % 4 == 0) {
                        Thread.sleep(1);
                    }
                }
            } catch (IOException | InterruptedException e) {
                // the reader below fails then
            }
        }, "test-writer");
        writer.start();
        for (int i = 0; i < chunks; i++) {
            assertEquals(i, in.readInt(), "chunks came back out of order");
        }
        writer.join();
        proxy.heal();
        out.writeInt(7); // a heal leaves the connection usable: it lost nothing
        out.flush();
        assertEquals(7, in.readInt());
    }

    @Test
    void blackHoleCutsOpenConnectionsAndSwallowsNewOnes() throws Exception {
        Socket[] p = pair();
        proxy.inject(NetworkFault.BLACK_HOLE);
        assertEnded(p[0], "an open connection's client when the black hole starts");
        assertEnded(p[1], "an open connection's server when the black hole starts");

        Socket swallowed = connect(); // the connection is accepted...
        send(swallowed, "req");
        assertNull(accepted.poll(SILENCE, TimeUnit.MILLISECONDS), "... but never reaches the server");
        assertSilent(swallowed, "a black-holed connection"); // ... nor is answered, nor closed

        proxy.heal();
        assertReset(swallowed, "a black-holed connection after heal");
        pair(); // new connections are forwarded again
    }

    @Test
    void injectingAnotherFaultHealsTheCurrentOne() throws Exception {
        Socket[] p = pair();
        proxy.inject(NetworkFault.DROP);
        send(p[0], "lost");
        assertSilent(p[1], "a request under DROP");
        proxy.inject(NetworkFault.LATENCY); // heals DROP first: the connection that lost bytes is reset
        assertReset(p[0], "the client once the next fault is injected");
        proxy.inject(NetworkFault.FREEZE);
        Socket c = connect();
        assertNull(accepted.poll(SILENCE, TimeUnit.MILLISECONDS), "a new connection reached the server while frozen");
        proxy.heal();
        Socket s = serverSide();
        send(c, "ok");
        assertEquals("ok", receive(s, 2));
    }

    @Test
    void usesTwoThreadsPerConnectionUnderLatencyAsWithout() throws Exception {
        long before = proxyThreads();
        proxy.inject(NetworkFault.LATENCY);
        int connections = 6;
        for (int i = 0; i < connections; i++) {
            pair(); // a round trip each way, delayed
        }
        // the short-lived connecting threads end; the two of each direction stay while it is open.
        // Threads of proxies closed by earlier tests only go away, which cannot make this fail.
        TestTiming.await("at most two threads per connection", Duration.ofSeconds(5),
                () -> proxyThreads() - before <= 2L * connections);
        System.out.println("[tcp-proxy] threads for " + connections + " delayed connections: " + (proxyThreads() - before));
    }

    private static long proxyThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("dlock-tck-proxy-")).count();
    }

    @Test
    void rejectsANullFault() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> proxy.inject(null));
        assertTrue(e.getMessage().contains("kind"), e.getMessage());
    }

    @Test
    void latencyDelaysAreDrawnFromTheSeedWithinTheirBounds() {
        SplittableRandom a = new SplittableRandom(7);
        SplittableRandom b = new SplittableRandom(7);
        long[] first = new long[1000];
        long[] second = new long[1000];
        for (int i = 0; i < first.length; i++) {
            first[i] = NetworkFault.drawLatency(a).toMillis();
            second[i] = NetworkFault.drawLatency(b).toMillis();
            assertTrue(first[i] >= 50 && first[i] <= 500, first[i] + " ms");
        }
        assertArrayEquals(first, second, "the same seed draws the same delays");
        assertThrows(IllegalArgumentException.class, () -> NetworkFault.drawLatency(null));
    }

    /** Answers every 4 bytes with those 4 bytes, on a thread of its own, until the connection ends. */
    private static void echoEvery4Bytes(Socket s) {
        Thread t = new Thread(() -> {
            try {
                InputStream in = s.getInputStream();
                DataInputStream data = new DataInputStream(in);
                OutputStream out = s.getOutputStream();
                byte[] request = new byte[4];
                while (true) {
                    data.readFully(request);
                    out.write(request);
                    out.flush();
                }
            } catch (IOException e) {
                // the test closed the connection
            }
        }, "test-echo");
        t.setDaemon(true);
        t.start();
    }
}
