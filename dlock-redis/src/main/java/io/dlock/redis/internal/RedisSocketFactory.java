package io.dlock.redis.internal;

import java.io.IOException;
import java.net.Socket;
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
 * completes the TLS handshake within its read timeout, verifying the host name.
 *
 * <p>The handshake is done here rather than on jedis's first write: a handshake that times out
 * inside jedis is tried again when jedis flushes on disconnect, doubling the wait.
 */
final class RedisSocketFactory implements JedisSocketFactory {

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
        Socket plain = new DefaultJedisSocketFactory(address, config).createSocket();
        onTcpSocket.accept(plain);
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
            try {
                plain.close();
            } catch (IOException ignored) {
                // failing anyway
            }
            throw new JedisConnectionException("TLS handshake with " + address + " failed", e);
        }
    }

    @Override
    public String toString() {
        return (tls ? "rediss://" : "redis://") + address;
    }
}
