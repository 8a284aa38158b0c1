package io.dlock.redis.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import redis.clients.jedis.DefaultJedisSocketFactory;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisSocketFactory;
import redis.clients.jedis.exceptions.JedisConnectionException;

/**
 * Connects to the server, within the configuration's connect timeout, and for {@code rediss://}
 * completes the TLS handshake, verifying the host name; the handshake and jedis's set-up commands
 * share what the connect left of the configuration's read timeout (the call's budget).
 *
 * <p>The handshake is done here rather than on jedis's first write: a handshake that times out
 * inside jedis is tried again when jedis flushes on disconnect, doubling the wait.
 */
final class RedisSocketFactory implements JedisSocketFactory {

    /** {@code PING}, as a Redis request. */
    private static final byte[] PING = "*1\r\n$4\r\nPING\r\n".getBytes(StandardCharsets.US_ASCII);
    /** The longest answer to PING read before it is judged; Redis's longest error (protected mode) is about 1 KiB. */
    private static final int MAX_PING_ANSWER = 4096;
    /** The answer a Redis gives to PING when it needs nothing else first. */
    private static final byte[] PONG = "+PONG\r\n".getBytes(StandardCharsets.US_ASCII);
    /** How many bytes of a foreign answer a message shows. */
    private static final int SHOWN = 24;

    /** The shortest read timeout the handshake and set-up get, even when the connect used up the budget. */
    private static final int MIN_SET_UP_MILLIS = 100;

    /** The server, asked at each connect (Sentinel: the primary of the moment). */
    private final Supplier<HostAndPort> address;
    /** The one server, for {@link #toString()}; null when the supplier may name another each time. */
    private final HostAndPort fixed;
    private final JedisClientConfig config;
    private final boolean tls;
    private final SSLSocketFactory sslSocketFactory;

    /**
     * @param address the server
     * @param config timeouts and socket options; its ssl flag is ignored
     * @param tls whether to speak TLS
     * @param sslSocketFactory the TLS socket factory, or null for the JVM default
     */
    RedisSocketFactory(HostAndPort address, JedisClientConfig config, boolean tls, SSLSocketFactory sslSocketFactory) {
        this(() -> address, address, config, tls, sslSocketFactory);
    }

    /**
     * A socket factory whose server may change: each connect asks the supplier once.
     *
     * @param address names the server at each connect; may throw a {@link JedisConnectionException}
     * @param config timeouts and socket options; its ssl flag is ignored
     * @param tls whether to speak TLS
     * @param sslSocketFactory the TLS socket factory, or null for the JVM default
     */
    RedisSocketFactory(Supplier<HostAndPort> address, JedisClientConfig config, boolean tls,
                       SSLSocketFactory sslSocketFactory) {
        this(address, null, config, tls, sslSocketFactory);
    }

    private RedisSocketFactory(Supplier<HostAndPort> address, HostAndPort fixed, JedisClientConfig config, boolean tls,
                               SSLSocketFactory sslSocketFactory) {
        this.address = address;
        this.fixed = fixed;
        this.config = config;
        this.tls = tls;
        this.sslSocketFactory = sslSocketFactory;
    }

    @Override
    public Socket createSocket() {
        return createSocket(s -> { });
    }

    /**
     * Connects.
     *
     * @param onTcpSocket is given the TCP socket as soon as it is connected, so that another thread
     *     can close it to end a read at once (closing a TLS socket may wait on its protocol)
     * @return the socket to use, TLS or not
     */
    Socket createSocket(Consumer<Socket> onTcpSocket) {
        long start = System.nanoTime();
        HostAndPort address = this.address.get();
        Socket plain = new DefaultJedisSocketFactory(address, config).createSocket();
        onTcpSocket.accept(plain);
        try {
            // the handshake and the set-up commands (AUTH, SELECT: jedis reads this socket's
            // timeout) get what the connect left of the budget, not a whole budget more
            long left = config.getSocketTimeoutMillis() - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            plain.setSoTimeout((int) Math.max(MIN_SET_UP_MILLIS, left));
        } catch (IOException e) {
            closeQuietly(plain);
            throw new JedisConnectionException("setting the read timeout of a connection to " + address + " failed", e);
        }
        if (!tls) {
            return speaksRedis(plain, plain, address);
        }
        Socket secure;
        try {
            SSLSocketFactory factory = sslSocketFactory != null ? sslSocketFactory
                    : (SSLSocketFactory) SSLSocketFactory.getDefault();
            SSLSocket socket = (SSLSocket) factory.createSocket(plain, address.getHost(), address.getPort(), true);
            SSLParameters parameters = socket.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS"); // verify the host name
            socket.setSSLParameters(parameters);
            socket.startHandshake(); // bounded by the read timeout set on the TCP socket
            secure = socket;
        } catch (IOException | RuntimeException e) {
            closeQuietly(plain);
            throw new JedisConnectionException("TLS handshake with " + address + " failed", e);
        }
        return speaksRedis(secure, plain, address);
    }

    /**
     * Asks the server for {@code PING} on the raw socket, before jedis reads anything from it, and
     * accepts the connection only if the answer is a Redis reply: {@code +PONG}, or an error line
     * (a server that wants authentication first says {@code -NOAUTH ...}). jedis trusts what it
     * reads: a length field of bytes that are not a Redis reply made it allocate whatever they
     * spelled (an {@link OutOfMemoryError}, "Illegal Capacity: -2139858884"), or wait for that
     * many bytes until the timeout. The answer is read a byte at a time up to its end of line, so
     * that nothing of what follows is taken from jedis.
     *
     * @param socket the socket to the server, TLS or not
     * @param tcp the TCP socket under it, closed on failure
     * @param address the server, for messages
     * @return the socket
     * @throws NotRedisException if the server answered with something else
     * @throws JedisConnectionException if it did not answer in time, or closed the connection
     */
    private Socket speaksRedis(Socket socket, Socket tcp, HostAndPort address) {
        byte[] line = new byte[MAX_PING_ANSWER];
        int n = 0;
        try {
            OutputStream out = socket.getOutputStream();
            out.write(PING);
            out.flush();
            InputStream in = socket.getInputStream();
            while (n < line.length) {
                int b = in.read();
                if (b < 0) {
                    break;
                }
                line[n++] = (byte) b;
                if (b == '\n') {
                    break;
                }
                if (!mayBeReply(line, n)) {
                    // judged already; what else has arrived is only read to be shown
                    int more = Math.min(in.available(), SHOWN - n);
                    for (int i = 0; i < more && n < line.length; i++) {
                        line[n++] = (byte) in.read();
                    }
                    break;
                }
            }
        } catch (IOException e) {
            closeQuietly(tcp);
            throw new JedisConnectionException("no answer to PING from " + address, e);
        }
        String answer = new String(line, 0, n, StandardCharsets.ISO_8859_1);
        boolean pong = Arrays.equals(line, 0, n, PONG, 0, PONG.length);
        boolean error = n > 2 && line[0] == '-' && answer.endsWith("\r\n") && printable(answer);
        if (pong || error) {
            return socket;
        }
        closeQuietly(tcp);
        if (n == 0) {
            throw new JedisConnectionException(address + " closed the connection without answering PING");
        }
        boolean tlsRecord = !tls && (line[0] == 0x15 || line[0] == 0x16);
        throw new NotRedisException("it answered PING with " + shown(line, n) + (tlsRecord
                ? ", which looks like TLS: if the server speaks TLS, use rediss://" : ""), tlsRecord);
    }

    /** A server that answered PING with something that is not a Redis reply. */
    static final class NotRedisException extends JedisConnectionException {
        private static final long serialVersionUID = 1L;

        /** Whether the answer starts like a TLS record (a TLS server for a plain client). */
        final boolean looksLikeTls;

        NotRedisException(String message, boolean looksLikeTls) {
            super(message);
            this.looksLikeTls = looksLikeTls;
        }
    }

    /** Whether the first {@code n} bytes of an answer can still become {@code +PONG} or an error line. */
    private static boolean mayBeReply(byte[] line, int n) {
        if (line[0] == '+') {
            return n <= PONG.length && Arrays.equals(line, 0, n, PONG, 0, n);
        }
        if (line[0] != '-') {
            return false;
        }
        int c = line[n - 1] & 0xff;
        return c == '\r' || c >= 0x20 && c <= 0x7e;
    }

    private static boolean printable(String s) {
        for (int i = 0; i < s.length() - 2; i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return false;
            }
        }
        return true;
    }

    /** The first bytes of an answer, printable ASCII as it is and the rest as \xNN. */
    private static String shown(byte[] bytes, int n) {
        StringBuilder b = new StringBuilder("'");
        for (int i = 0; i < Math.min(n, SHOWN); i++) {
            int c = bytes[i] & 0xff;
            if (c >= 0x20 && c <= 0x7e && c != '\\' && c != '\'') {
                b.append((char) c);
            } else {
                b.append(String.format(Locale.ROOT, "\\x%02x", c));
            }
        }
        return b.append(n > SHOWN ? "'..." : "'").toString();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // failing anyway
        }
    }

    @Override
    public String toString() {
        return (tls ? "rediss://" : "redis://") + (fixed != null ? fixed : "(the server found at each connect)");
    }
}
