package io.dlock.redis;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A stand-in sentinel for clients whose traffic must pass through {@link io.dlock.tck.TcpProxy}s
 * (the TCK's freezable clients): it answers {@code SENTINEL GET-MASTER-ADDR-BY-NAME} with the
 * address of a proxy in front of the primary the real sentinels name. The master name carries the
 * proxies' ports, one per data node of the {@link RedisSentinelGroup} in its order:
 * {@code dlock-PORT0-PORT1-PORT2}; so one stub serves any number of clients, each with its own
 * proxies. Answers PING, AUTH and CLIENT with success, anything else with an error.
 */
final class SentinelStub implements AutoCloseable {

    private final RedisSentinelGroup group;
    private final ServerSocket server;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    SentinelStub(RedisSentinelGroup group) {
        this.group = group;
        try {
            server = new ServerSocket(0, 50, InetAddress.getByName(RedisServer.HOST));
        } catch (IOException e) {
            throw new IllegalStateException("cannot open the stub sentinel's port", e);
        }
        acceptor = new Thread(this::accept, "sentinel-stub-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** @return where the stub listens */
    InetSocketAddress address() {
        return new InetSocketAddress(RedisServer.HOST, server.getLocalPort());
    }

    /**
     * @param proxyPorts the proxy port of each data node, in the group's order
     * @return the master name that maps the primary to its proxy
     */
    static String masterName(List<Integer> proxyPorts) {
        StringBuilder b = new StringBuilder(RedisSentinelGroup.MASTER);
        for (int p : proxyPorts) {
            b.append('-').append(p);
        }
        return b.toString();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                open.add(s);
                Thread t = new Thread(() -> serve(s), "sentinel-stub-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            InputStream in = new BufferedInputStream(s.getInputStream());
            OutputStream out = s.getOutputStream();
            while (true) {
                List<String> command = readCommand(in);
                if (command == null) {
                    return;
                }
                out.write(answer(command).getBytes(StandardCharsets.UTF_8));
                out.flush();
            }
        } catch (IOException | RuntimeException e) {
            // the client went away, or the stub closed
        } finally {
            open.remove(s);
        }
    }

    private String answer(List<String> command) {
        String name = command.isEmpty() ? "" : command.get(0).toUpperCase(java.util.Locale.ROOT);
        switch (name) {
            case "PING":
                return "+PONG\r\n";
            case "AUTH":
            case "CLIENT":
                return "+OK\r\n";
            case "SENTINEL":
                if (command.size() == 3 && command.get(1).equalsIgnoreCase("GET-MASTER-ADDR-BY-NAME")) {
                    String[] parts = command.get(2).split("-");
                    if (!parts[0].equals(RedisSentinelGroup.MASTER) || parts.length != group.nodes().size() + 1) {
                        return "*-1\r\n";
                    }
                    String port = parts[1 + group.primaryIndex()];
                    return "*2\r\n$" + RedisServer.HOST.length() + "\r\n" + RedisServer.HOST + "\r\n$" + port.length()
                            + "\r\n" + port + "\r\n";
                }
                return "-ERR the stub sentinel answers only GET-MASTER-ADDR-BY-NAME\r\n";
            default:
                return "-ERR unknown command for the stub sentinel\r\n";
        }
    }

    /** Reads one RESP array of bulk strings; null at the end of the stream. */
    private static List<String> readCommand(InputStream in) throws IOException {
        String header = readLine(in);
        if (header == null) {
            return null;
        }
        if (!header.startsWith("*")) {
            throw new IOException("not a RESP array: " + header);
        }
        int n = Integer.parseInt(header.substring(1));
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String len = readLine(in);
            if (len == null || !len.startsWith("$")) {
                throw new IOException("not a bulk string: " + len);
            }
            byte[] b = in.readNBytes(Integer.parseInt(len.substring(1)) + 2);
            out.add(new String(b, 0, b.length - 2, StandardCharsets.UTF_8));
        }
        return out;
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\n') {
                byte[] line = b.toByteArray();
                return new String(line, 0, Math.max(0, line.length - 1), StandardCharsets.UTF_8);
            }
            b.write(c);
        }
        return null;
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (Socket s : open) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        try {
            acceptor.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
