package io.dlock.micrometer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code redis-server} on a free loopback port, without persistence, that can be paused
 * (SIGSTOP) and resumed: the minimal part of dlock-redis's test server that these tests need.
 */
final class RedisProcess implements AutoCloseable {

    private final Process process;
    private final int port;

    private RedisProcess(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /**
     * Starts a server.
     *
     * @param extraArgs options for the command line, e.g. {@code --requirepass pw}
     * @return the server, answering
     */
    static RedisProcess start(String... extraArgs) throws IOException, InterruptedException {
        String binary = Files.isExecutable(Path.of("/usr/bin/redis-server")) ? "/usr/bin/redis-server" : "redis-server";
        Path dir = Files.createTempDirectory("dlock-micrometer-redis-");
        for (int attempt = 0; ; attempt++) {
            int port;
            try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
            }
            List<String> cmd = new ArrayList<>(List.of(binary, "--bind", "127.0.0.1", "--port", Integer.toString(port),
                    "--save", "", "--appendonly", "no", "--dir", dir.toString(), "--protected-mode", "no"));
            cmd.addAll(List.of(extraArgs));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("redis.log").toFile()).start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (p.isAlive() && System.nanoTime() - deadline < 0) {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                    return new RedisProcess(p, port);
                } catch (IOException notYet) {
                    Thread.sleep(20);
                }
            }
            p.destroyForcibly();
            if (attempt == 4) {
                throw new IllegalStateException("redis-server did not start; its log:\n"
                        + Files.readString(dir.resolve("redis.log")));
            }
        }
    }

    int port() {
        return port;
    }

    /** Suspends the server (SIGSTOP): connections stay open, nothing is answered. */
    void pause() {
        signal("STOP");
    }

    /** Resumes a paused server (SIGCONT). */
    void resume() {
        signal("CONT");
    }

    private void signal(String name) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }
}
