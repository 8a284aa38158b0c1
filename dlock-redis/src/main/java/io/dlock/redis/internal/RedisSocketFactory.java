package io.dlock.redis.internal;

import java.io.IOException;
import java.net.Socket;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
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

    /** The shortest read timeout the handshake and set-up get, even when the connect used up the budget. */
    private static final int MIN_SET_UP_MILLIS = 100;

    private final HostAndPort address;
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
        this.address = address;
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
            return plain;
        }
        try {
            SSLSocketFactory factory = sslSocketFactory != null ? sslSocketFactory
                    : (SSLSocketFactory) SSLSocketFactory.getDefault();
            SSLSocket socket = (SSLSocket) factory.createSocket(plain, address.getHost(), address.getPort(), true);
            SSLParameters parameters = socket.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS"); // verify the host name
            socket.setSSLParameters(parameters);
            socket.startHandshake(); // bounded by the read timeout set on the TCP socket
            return socket;
        } catch (IOException | RuntimeException e) {
            closeQuietly(plain);
            throw new JedisConnectionException("TLS handshake with " + address + " failed", e);
        }
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
        return (tls ? "rediss://" : "redis://") + address;
    }
}
