package io.dlock.tck;

import io.dlock.spi.support.Arguments;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A TCP listener on a free loopback port where something other than the backend listens, for
 * tests of what a client says when its URI names the wrong port: it writes fixed bytes to every
 * connection it accepts (or nothing at all), then reads and discards whatever the client sends, and
 * never answers again. Threads: one accepting and one per connection, daemons named
 * {@code dlock-tck-foreign-N-...}. Thread-safe.
 */
public final class ForeignServer implements AutoCloseable {

    private static final AtomicInteger IDS = new AtomicInteger();

    private final ServerSocket server;
    private final byte[] greeting;
    private final Set<Socket> accepted = ConcurrentHashMap.newKeySet();
    private final String name = "dlock-tck-foreign-" + IDS.incrementAndGet();
    private final Thread acceptor;

    private ForeignServer(byte[] greeting) throws IOException {
        this.greeting = greeting;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.acceptor = new Thread(this::acceptLoop, name + "-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Starts a listener that writes {@code greeting} to every connection as soon as it accepts it.
     *
     * @param greeting the bytes, e.g. {@link #garbage()}; empty for a listener that never says anything
     * @return the running listener
     * @throws IllegalArgumentException if {@code greeting} is null
     * @throws UncheckedIOException if no port could be bound
     */
    public static ForeignServer greeting(byte[] greeting) {
        if (greeting == null) {
            throw new IllegalArgumentException("greeting must not be null");
        }
        try {
            return new ForeignServer(greeting.clone());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Starts a listener that writes {@code greeting} (as ASCII) to every connection.
     *
     * @param greeting the text, e.g. an HTTP response
     * @return the running listener
     * @throws IllegalArgumentException if {@code greeting} is null
     */
    public static ForeignServer greeting(String greeting) {
        if (greeting == null) {
            throw new IllegalArgumentException("greeting must not be null");
        }
        return greeting(greeting.getBytes(StandardCharsets.ISO_8859_1));
    }

    /**
     * 256 bytes of no protocol: {@code 0xA5 ^ i} for i from 0.
     *
     * @return a fresh copy
     */
    public static byte[] garbage() {
        byte[] b = new byte[256];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (0xA5 ^ i);
        }
        return b;
    }

    /**
     * Bytes that a parser of length-prefixed replies reads as a huge or negative length: a
     * {@code prefix} character (such as Redis's {@code *} of an array or {@code $} of a string),
     * then garbage that is not digits, then an end of line.
     *
     * @param prefix the first byte
     * @return the bytes
     */
    public static byte[] lengthPrefixedGarbage(char prefix) {
        byte[] g = garbage();
        byte[] b = Arrays.copyOf(new byte[] {(byte) prefix}, 40);
        System.arraycopy(g, 1, b, 1, 37);
        b[38] = '\r';
        b[39] = '\n';
        return b;
    }

    /**
     * What other services say first, by a name for test messages: {@code garbage}, {@code an HTTP
     * server} (a 400 response), {@code a Redis server} (an error line), {@code a TLS server} (an
     * alert record), and {@code an array of garbage length} and {@code a string of garbage length}
     * (see {@link #lengthPrefixedGarbage(char)}).
     *
     * @return a fresh map, in that order
     */
    public static Map<String, byte[]> samples() {
        Map<String, byte[]> m = new LinkedHashMap<>();
        m.put("garbage", garbage());
        m.put("an HTTP server", "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
                .getBytes(StandardCharsets.US_ASCII));
        m.put("a Redis server", "-ERR unknown command\r\n".getBytes(StandardCharsets.US_ASCII));
        m.put("a TLS server", new byte[] {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x32});
        m.put("an array of garbage length", lengthPrefixedGarbage('*'));
        m.put("a string of garbage length", lengthPrefixedGarbage('$'));
        return m;
    }

    /**
     * What a client of a listener said.
     *
     * @param hostPort where the listener was, {@code 127.0.0.1:PORT}
     * @param exception what the client threw
     */
    public record Failure(String hostPort, LockBackendException exception) {

        /**
         * @throws IllegalArgumentException if {@code hostPort} or {@code exception} is {@code null}
         */
        public Failure {
            Arguments.notNull("hostPort", hostPort);
            Arguments.notNull("exception", exception);
        }

        /** @return the exception's message */
        public String message() {
            return exception.getMessage();
        }
    }

    /**
     * For each sample, starts a listener that greets with it and a client whose URI names it, and
     * takes what an acquire (or the open) throws: a {@link LockBackendException} within
     * {@code bound}, or the test fails.
     *
     * @param samples the greetings by name, e.g. {@link #samples()}
     * @param uri makes the client's URI from the listener's {@code host:port}
     * @param operationTimeout the clients' operation timeout
     * @param bound how soon each failure must come
     * @return the failures by sample name, in the samples' order
     * @throws IllegalArgumentException if an argument is null
     */
    public static Map<String, Failure> failures(Map<String, byte[]> samples, Function<String, String> uri,
                                                             Duration operationTimeout, Duration bound) {
        if (samples == null || uri == null || operationTimeout == null || bound == null) {
            throw new IllegalArgumentException("samples, uri, operationTimeout and bound must not be null");
        }
        Map<String, Failure> out = new LinkedHashMap<>();
        for (Map.Entry<String, byte[]> sample : samples.entrySet()) {
            try (ForeignServer foreign = greeting(sample.getValue())) {
                LockClientConfig config = LockClientConfig.builder(uri.apply(foreign.hostPort()))
                        .operationTimeout(operationTimeout).build();
                LockBackendException e = TestTiming.assertThrowsWithin(LockBackendException.class, bound, () -> {
                    try (LockClient c = LockClient.open(config)) {
                        c.lock("foreign-server").tryAcquire(Duration.ofSeconds(30));
                    }
                });
                System.out.println("[dlock-tck] " + sample.getKey() + " at " + foreign.hostPort() + ": "
                        + e.getMessage());
                out.put(sample.getKey(), new Failure(foreign.hostPort(), e));
            }
        }
        return out;
    }

    /** @return the port it listens on, on the loopback address */
    public int port() {
        return server.getLocalPort();
    }

    /** @return {@code 127.0.0.1:PORT} */
    public String hostPort() {
        return server.getInetAddress().getHostAddress() + ":" + port();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException closed) {
                return;
            }
            accepted.add(s);
            Thread t = new Thread(() -> serve(s), name + "-conn");
            t.setDaemon(true);
            t.start();
        }
    }

    private void serve(Socket s) {
        try (s) {
            OutputStream out = s.getOutputStream();
            out.write(greeting);
            out.flush();
            InputStream in = s.getInputStream();
            byte[] sink = new byte[4096];
            while (in.read(sink) >= 0) {
                // discard: the client's writes never block, and nothing is answered
            }
        } catch (IOException closedOrReset) {
            // the client went away, or close() closed the socket
        } finally {
            accepted.remove(s);
        }
    }

    /** Stops listening and closes every connection. */
    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (Socket s : accepted) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "ForeignServer{" + hostPort() + "}";
    }
}
