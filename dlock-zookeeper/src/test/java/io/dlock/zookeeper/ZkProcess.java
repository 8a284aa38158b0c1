package io.dlock.zookeeper;

import io.dlock.tck.ServerProcesses;

import io.dlock.tck.ServerControl;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A standalone ZooKeeper server in a child JVM (ZooKeeper's own {@code ZooKeeperServerMain}, from
 * the test classpath), on a free loopback port, so that tests can pause it (SIGSTOP), resume it,
 * kill it (SIGKILL) and restart it on the same port with its data, as {@link ServerControl} asks.
 */
public final class ZkProcess implements ServerControl, AutoCloseable {

    private final int port;
    private final Path dir;
    private final List<String> jvmOptions;
    private final Thread reaper = new Thread(this::destroyNow, "zk-process-reaper");
    private Process process;

    private ZkProcess(int port, Path dir, List<String> jvmOptions) {
        this.port = port;
        this.dir = dir;
        this.jvmOptions = List.copyOf(jvmOptions);
    }

    /**
     * Starts a server with a 200 ms tick (sessions of 0.4 to 4 s).
     *
     * @return the running server
     */
    public static ZkProcess start() {
        return start(List.of());
    }

    /**
     * Starts a server with a 200 ms tick and extra JVM options (system properties of the server).
     *
     * @param jvmOptions e.g. {@code -Dzookeeper.DigestAuthenticationProvider.enabled=false}
     * @return the running server
     */
    public static ZkProcess start(List<String> jvmOptions) {
        try {
            ZkProcess p = new ZkProcess(ZkServers.closedPort(), Files.createTempDirectory("dlock-zk-"), jvmOptions);
            Files.writeString(p.dir.resolve("zoo.cfg"), String.join("\n",
                    "tickTime=" + ZkServers.TICK_MS,
                    "dataDir=" + p.dir.resolve("data"),
                    "clientPort=" + p.port,
                    "clientPortAddress=127.0.0.1",
                    "admin.enableServer=false",
                    "4lw.commands.whitelist=*",
                    ""), StandardCharsets.UTF_8);
            Runtime.getRuntime().addShutdownHook(p.reaper);
            p.launch();
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the client port */
    public int port() {
        return port;
    }

    /**
     * Returns the command line of a child JVM for a ZooKeeper server: this JVM's java, the test
     * classpath, a small heap, and container nodes checked every 500 ms (so tests see the
     * clean-up).
     *
     * @param options more JVM options, before the main class
     * @param mainAndArgs the main class and its arguments
     * @return the command line
     */
    static List<String> serverJvm(List<String> options, List<String> mainAndArgs) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:+UseSerialGC",
                "-Dznode.container.checkIntervalMs=500"));
        cmd.addAll(options);
        cmd.addAll(List.of("-cp", classpath));
        cmd.addAll(mainAndArgs);
        return cmd;
    }

    private synchronized void launch() throws IOException {
        ProcessBuilder pb = new ProcessBuilder(serverJvm(jvmOptions,
                List.of("org.apache.zookeeper.server.ZooKeeperServerMain", dir.resolve("zoo.cfg").toString())));
        pb.redirectErrorStream(true);
        pb.redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("server.log").toFile()));
        process = pb.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!ZkServers.srvr(port).contains("Mode: standalone")) {
            if (!process.isAlive() || System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the ZooKeeper server process did not start; see " + dir.resolve("server.log"));
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while starting ZooKeeper", e);
            }
        }
    }



    @Override
    public synchronized void pause() {
        ServerProcesses.signal(process, "STOP");
    }

    @Override
    public synchronized void resume() {
        ServerProcesses.signal(process, "CONT");
    }

    @Override
    public synchronized void kill() {
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public synchronized void restart() {
        if (process.isAlive()) {
            throw new IllegalStateException("restart() needs a killed server");
        }
        try {
            launch();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void destroyNow() {
        Process p = process;
        if (p != null) {
            p.destroyForcibly();
        }
    }

    /** Kills the server and deletes its files. */
    @Override
    public synchronized void close() {
        if (process.isAlive()) {
            kill(); // SIGKILL ends a paused process too
        }
        try {
            Runtime.getRuntime().removeShutdownHook(reaper);
        } catch (IllegalStateException e) {
            // shutting down already
        }
        ServerProcesses.deleteTree(dir);
    }
}
