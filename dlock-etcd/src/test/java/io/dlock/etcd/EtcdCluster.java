package io.dlock.etcd;

import io.dlock.tck.ServerProcesses;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;

/**
 * Real {@code etcd} processes on free loopback ports, for tests: one member, or a cluster of
 * several on one machine. Each member has its own data directory (on {@code /dev/shm} when it
 * exists, so that fsync is cheap), is started with a short heartbeat and election timeout (100 ms
 * and 500 ms, so that a new leader is elected within about a second), and can be paused
 * (SIGSTOP), resumed, killed (SIGKILL) and restarted with its data. Optionally serves clients over
 * TLS with a given certificate.
 */
public final class EtcdCluster implements AutoCloseable {

    static final String HOST = "127.0.0.1";

    private static final long START_TIMEOUT_MILLIS = 20_000;

    /** Every etcd process the tests started and did not stop yet: killed if the JVM exits early. */
    private static final Set<Process> RUNNING = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(Process::destroyForcibly),
                "etcd-test-cleanup"));
    }

    private final List<Member> members = new ArrayList<>();
    private final Path root;
    private final Tls tls;
    private final String token = "dlock-test-" + Long.toHexString(ThreadLocalRandom.current().nextLong());

    /** A server certificate for TLS: PEM files, and a context that trusts it for health checks. */
    record Tls(Path cert, Path key, SSLContext trust) { }

    private EtcdCluster(int size, Tls tls) {
        this.tls = tls;
        Path base = Files.isDirectory(Path.of("/dev/shm")) && Files.isWritable(Path.of("/dev/shm"))
                ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
        try {
            this.root = Files.createTempDirectory(base, "dlock-etcd-test-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (int i = 0; i < size; i++) {
            members.add(new Member(i));
        }
    }

    /** @return one started member */
    public static EtcdCluster single() {
        return start(1, null);
    }

    /**
     * Starts a cluster and waits until every member is healthy (a leader is elected).
     *
     * @param size the number of members
     * @param tls the client certificate to serve with, or null for plain http
     * @return the cluster
     */
    static EtcdCluster start(int size, Tls tls) {
        binary();
        EtcdCluster c = new EtcdCluster(size, tls);
        try {
            for (Member m : c.members) {
                m.launch();
            }
            for (Member m : c.members) {
                m.awaitHealthy();
            }
            return c;
        } catch (RuntimeException | Error e) {
            c.close();
            throw e;
        }
    }

    /** @return the path of etcd, or fails with what to install */
    static String binary() {
        List<Path> candidates = new ArrayList<>();
        String path = System.getenv("PATH");
        if (path != null) {
            for (String d : path.split(java.io.File.pathSeparator)) {
                if (!d.isEmpty()) {
                    candidates.add(Path.of(d, "etcd"));
                }
            }
        }
        candidates.add(Path.of("/usr/bin/etcd"));
        candidates.add(Path.of("/usr/local/bin/etcd"));
        for (Path p : candidates) {
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        throw new IllegalStateException("etcd is not installed (looked in PATH, /usr/bin and /usr/local/bin): the "
                + "dlock-etcd tests run real etcd servers; install it, e.g. apt-get install etcd-server");
    }

    /** @return a loopback port that was free a moment ago */
    static int freePort() {
        return ServerProcesses.freeLoopbackPort();
    }

    int size() {
        return members.size();
    }

    Member member(int i) {
        return members.get(i);
    }

    public List<InetSocketAddress> addresses() {
        return members.stream().map(Member::address).collect(Collectors.toList());
    }

    /** @return {@code etcd://127.0.0.1:P1,127.0.0.1:P2,...} (or etcds://) */
    String uri() {
        return (tls != null ? "etcds://" : "etcd://")
                + members.stream().map(m -> HOST + ":" + m.clientPort).collect(Collectors.joining(","));
    }

    /**
     * Finds the leader, asking the running members until they agree.
     *
     * @return the index of the leader
     */
    int leader() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (System.nanoTime() - deadline < 0) {
            for (Member m : members) {
                if (!m.running()) {
                    continue;
                }
                String status = m.post("/v3/maintenance/status", "{}");
                Matcher leader = Pattern.compile("\"leader\":\"?(\\d+)").matcher(status == null ? "" : status);
                if (leader.find() && !leader.group(1).equals("0")) {
                    for (Member candidate : members) {
                        if (leader.group(1).equals(candidate.memberId())) {
                            return candidate.index;
                        }
                    }
                }
            }
            sleep(50);
        }
        throw new IllegalStateException("no etcd member named a leader within 15 s");
    }

    /** SIGSTOPs every member. */
    void pauseAll() {
        for (Member m : members) {
            m.pause();
        }
    }

    /** SIGCONTs every paused member. */
    void resumeAll() {
        for (Member m : members) {
            if (m.paused) {
                m.resume();
            }
        }
    }

    /** SIGKILLs every running member. */
    void killAll() {
        for (Member m : members) {
            if (m.process != null && m.process.isAlive()) {
                m.kill();
            }
        }
    }

    /**
     * Starts every member that is not running, with its data, and waits until all are healthy: they
     * are all launched first, since a member of a larger cluster serves only once a quorum is back.
     */
    void restartStopped() {
        List<Member> stopped = members.stream().filter(m -> m.process == null || !m.process.isAlive())
                .collect(Collectors.toList());
        for (Member m : stopped) {
            m.launch();
        }
        for (Member m : stopped) {
            try {
                m.awaitHealthy();
            } catch (IllegalStateException e) {
                m.restart(); // most likely its port was not free yet
            }
        }
    }

    /** Stops every member and deletes the data. */
    @Override
    public void close() {
        for (Member m : members) {
            m.stop();
        }
        ServerProcesses.deleteTree(root);
    }

    @Override
    public String toString() {
        return "EtcdCluster{" + uri() + "}";
    }

    /** One etcd process. */
    final class Member {
        final int index;
        final String name;
        final int clientPort;
        final int peerPort;
        private final Path dir;
        private Process process;
        private boolean paused;
        private String memberId;

        private Member(int index) {
            this.index = index;
            this.name = "m" + index;
            this.clientPort = freePort();
            this.peerPort = freePort();
            this.dir = root.resolve(name);
        }

        InetSocketAddress address() {
            return new InetSocketAddress(HOST, clientPort);
        }

        String clientUrl() {
            return (tls != null ? "https://" : "http://") + HOST + ":" + clientPort;
        }

        Path log() {
            return root.resolve(name + ".log");
        }

        long pid() {
            return process.pid();
        }

        boolean running() {
            return process != null && process.isAlive() && !paused;
        }

        private void launch() {
            String cluster = members.stream().map(m -> m.name + "=http://" + HOST + ":" + m.peerPort)
                    .collect(Collectors.joining(","));
            List<String> cmd = new ArrayList<>(List.of(binary(), "--name", name, "--data-dir", dir.toString(),
                    "--listen-client-urls", clientUrl(), "--advertise-client-urls", clientUrl(),
                    "--listen-peer-urls", "http://" + HOST + ":" + peerPort,
                    "--initial-advertise-peer-urls", "http://" + HOST + ":" + peerPort,
                    "--initial-cluster", cluster, "--initial-cluster-state", "new",
                    "--initial-cluster-token", token,
                    "--heartbeat-interval", "100", "--election-timeout", "500",
                    "--logger", "zap", "--log-outputs", "stderr"));
            if (tls != null) {
                cmd.addAll(List.of("--cert-file", tls.cert().toString(), "--key-file", tls.key().toString()));
            }
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log().toFile()));
            try {
                process = pb.start();
            } catch (IOException e) {
                throw new UncheckedIOException("could not start " + cmd.get(0), e);
            }
            RUNNING.add(process);
            paused = false;
        }

        private void awaitHealthy() {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MILLIS);
            while (System.nanoTime() - deadline < 0) {
                if (!process.isAlive()) {
                    throw new IllegalStateException("etcd " + name + " exited with " + process.exitValue()
                            + " (client port " + clientPort + ", peer port " + peerPort + "); its log:\n" + readLog());
                }
                String health = get("/health");
                if (health != null && health.contains("\"health\":\"true\"")) {
                    return;
                }
                sleep(50);
            }
            throw new IllegalStateException("etcd " + name + " was not healthy within " + START_TIMEOUT_MILLIS
                    + " ms; its log:\n" + readLog());
        }

        /** @return this member's id as the status API shows it (decimal) */
        String memberId() {
            if (memberId == null && running()) {
                String status = post("/v3/maintenance/status", "{}");
                Matcher m = Pattern.compile("\"member_id\":\"?(\\d+)").matcher(status == null ? "" : status);
                if (m.find()) {
                    memberId = m.group(1);
                }
            }
            return memberId;
        }

        /** @return the member's Prometheus metrics, with the HTTP header */
        String metrics() {
            String m = get("/metrics");
            if (m == null) {
                throw new IllegalStateException(name + " did not answer GET /metrics");
            }
            return m;
        }

        String readLog() {
            try {
                return Files.exists(log()) ? Files.readString(log(), StandardCharsets.UTF_8) : "(no log)";
            } catch (IOException e) {
                return "(log unreadable: " + e + ")";
            }
        }

        private String get(String path) {
            return http("GET " + path + " HTTP/1.0\r\nHost: " + HOST + "\r\n\r\n");
        }

        private String post(String path, String body) {
            return http("POST " + path + " HTTP/1.0\r\nHost: " + HOST + "\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + body.length() + "\r\n\r\n" + body);
        }

        /** One HTTP/1.0 exchange with a short timeout; null if the member did not answer. */
        private String http(String request) {
            try (Socket s = tls != null ? tls.trust().getSocketFactory().createSocket() : new Socket()) {
                s.connect(new InetSocketAddress(HOST, clientPort), 500);
                s.setSoTimeout(1000);
                OutputStream out = s.getOutputStream();
                out.write(request.getBytes(StandardCharsets.US_ASCII));
                out.flush();
                InputStream in = s.getInputStream();
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return null;
            }
        }

        /** Suspends the process with SIGSTOP: connections stay open and nothing is answered. */
        void pause() {
            ServerProcesses.signal(process, "STOP");
            paused = true;
        }

        /** Resumes a paused process with SIGCONT. */
        void resume() {
            ServerProcesses.signal(process, "CONT");
            paused = false;
        }

        /** Kills the process with SIGKILL and waits until it is gone. Its data stays. */
        void kill() {
            RUNNING.remove(process);
            ServerProcesses.killAndWait(process, "etcd");
            paused = false;
        }

        /**
         * Starts the member again with its data and ports after {@link #kill()}; waits until it
         * serves (a lone member of a larger cluster serves once it has rejoined a quorum).
         */
        void restart() {
            if (process != null && process.isAlive()) {
                kill();
            }
            IllegalStateException last = null;
            for (int i = 0; i < 20; i++) {
                launch();
                try {
                    awaitHealthy();
                    return;
                } catch (IllegalStateException e) {
                    last = e; // most likely the port was not free yet
                    if (process.isAlive()) {
                        kill();
                    }
                    sleep(250);
                }
            }
            throw last;
        }



        private void stop() {
            if (process != null) {
                RUNNING.remove(process);
            }
            if (process != null && process.isAlive()) {
                if (paused) {
                    try {
                        resume();
                    } catch (RuntimeException ignored) {
                        // it is killed below anyway
                    }
                }
                process.destroyForcibly();
                try {
                    process.waitFor(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public String toString() {
            return "etcd " + name + " (client " + clientPort + ", pid " + (process == null ? "-" : process.pid()) + ")";
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
