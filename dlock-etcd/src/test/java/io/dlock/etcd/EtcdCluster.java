package io.dlock.etcd;

import io.dlock.tck.NetworkNamespaces;
import io.dlock.tck.PeerNetwork;
import io.dlock.tck.ServerProcesses;
import io.dlock.tck.SocketForwarder;

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
 *
 * <p>A cluster of several members without TLS runs, where Linux network namespaces can be made
 * (root, {@link NetworkNamespaces#available()}), each member in a network namespace of its own on a
 * {@link PeerNetwork} ({@code 10.77.0.0/24}, member {@code i} at {@code 10.77.0.(i+1)}), so that a
 * member can really be cut off from its peers while its clients still reach it
 * ({@link #isolate(int)}): every packet between it and its peers is dropped, both ways, on every
 * connection, whoever dialed it (etcd peers dial each other in both directions, streams and
 * pipelines). Clients reach a member through a Unix socket (a file, so reachable from any
 * namespace) that etcd serves its client API on, and a {@link SocketForwarder} on a free loopback
 * port in front of it. The namespaces belong to the processes and vanish with them: nothing is
 * left on the host.
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

    /** The address block of the peer network inside the namespaces (private to them, so no clash). */
    private static final String PEER_NET = "10.77.0";

    private final List<Member> members = new ArrayList<>();
    private final Path root;
    private final Tls tls;
    /** The members' network, or null without namespaces. */
    private PeerNetwork network;
    private final String token = "dlock-test-" + Long.toHexString(ThreadLocalRandom.current().nextLong());

    /** A server certificate for TLS: PEM files, and a context that trusts it for health checks. */
    record Tls(Path cert, Path key, SSLContext trust) { }

    private EtcdCluster(int size, Tls tls, boolean namespaces) {
        this.tls = tls;
        Path base = Files.isDirectory(Path.of("/dev/shm")) && Files.isWritable(Path.of("/dev/shm"))
                ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
        try {
            this.root = Files.createTempDirectory(base, "dlock-etcd-test-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (namespaces) {
            network = PeerNetwork.start(PEER_NET);
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
     * Starts a cluster and waits until every member is healthy (a leader is elected). Several
     * members without TLS run in network namespaces where that is possible (see the class comment).
     *
     * @param size the number of members
     * @param tls the client certificate to serve with, or null for plain http
     * @return the cluster
     */
    static EtcdCluster start(int size, Tls tls) {
        binary();
        EtcdCluster c = new EtcdCluster(size, tls, size > 1 && tls == null && NetworkNamespaces.available());
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

    /** Stops every member, the forwarders and the peer network (so every namespace ends), and deletes the data. */
    @Override
    public void close() {
        for (Member m : members) {
            m.stop();
            if (m.forwarder != null) {
                m.forwarder.close();
            }
        }
        if (network != null) {
            network.close();
        }
        ServerProcesses.deleteTree(root);
    }

    // ---- the peer network, with namespaces ----

    /** @return whether a member can be cut off from its peers: the members run in network namespaces */
    boolean canIsolate() {
        return network != null;
    }

    /**
     * Cuts a member off from its peers, both ways, while its clients still reach it, and waits
     * until the cluster shows it: the member has no leader, and the others agree on a leader that
     * is not it.
     *
     * @param i the member
     * @throws IllegalStateException if the cluster does not show the cut within 15 s
     */
    void isolate(int i) {
        if (network == null) {
            throw new UnsupportedOperationException("this cluster does not run in network namespaces");
        }
        network.isolate(i);
        Member cut = members.get(i);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (System.nanoTime() - deadline < 0) {
            Status own = cut.status();
            boolean othersHaveLeader = true;
            for (Member m : members) {
                if (m.index == i || !m.running()) {
                    continue;
                }
                Status s = m.status();
                othersHaveLeader &= s != null && s.leader != null && !s.leader.equals("0")
                        && !s.leader.equals(cut.memberId());
            }
            // the member still answers its clients, and knows it has no leader
            if (own != null && (own.leader == null || own.leader.equals("0")) && othersHaveLeader) {
                return;
            }
            sleep(20);
        }
        throw new IllegalStateException("etcd " + cut.name + " was cut off from its peers, but the cluster did "
                + "not show it within 15 s");
    }

    /**
     * Reconnects every isolated member to its peers and waits until every running member agrees on
     * a leader.
     *
     * @throws IllegalStateException if they do not within 15 s
     */
    void heal() {
        if (network == null || network.heal().isEmpty()) {
            return;
        }
        awaitAgreedLeader(15);
    }

    /** @return the members cut off from their peers now */
    Set<Integer> isolated() {
        return network == null ? Set.of() : network.isolated();
    }

    private void awaitAgreedLeader(int seconds) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() - deadline < 0) {
            String leader = null;
            boolean agreed = true;
            for (Member m : members) {
                if (!m.running()) {
                    continue;
                }
                Status s = m.status();
                if (s == null || s.leader == null || s.leader.equals("0") || (leader != null && !leader.equals(s.leader))) {
                    agreed = false;
                    break;
                }
                leader = s.leader;
            }
            if (agreed && leader != null) {
                return;
            }
            sleep(20);
        }
        throw new IllegalStateException("the members of " + this + " did not agree on a leader within " + seconds + " s");
    }

    /** What a member says of itself: its leader (decimal id, null or "0" for none) and its Raft term. */
    record Status(String leader, long raftTerm) { }

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
        /** In front of the member's Unix socket for clients, with namespaces; else null. */
        private final SocketForwarder forwarder;
        private Process process;
        private boolean paused;
        private String memberId;

        private Member(int index) {
            this.index = index;
            this.name = "m" + index;
            this.dir = root.resolve(name);
            this.forwarder = network != null ? SocketForwarder.toUnixSocket(root.resolve(unixSocketName())) : null;
            this.clientPort = forwarder != null ? forwarder.port() : freePort();
            // with namespaces, the peer port is on the member's own address in its own namespace
            this.peerPort = freePort();
        }

        /** @return the file name of the Unix socket etcd serves clients on: etcd's unix://NAME:PORT, in its directory */
        private String unixSocketName() {
            return name + ".sock:0";
        }

        /** @return where the peers reach this member: its namespace's address, or loopback */
        String peerHost() {
            return network != null ? network.address(index) : HOST;
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
            String cluster = members.stream().map(m -> m.name + "=http://" + m.peerHost() + ":" + m.peerPort)
                    .collect(Collectors.joining(","));
            String peerUrl = "http://" + peerHost() + ":" + peerPort;
            List<String> cmd = new ArrayList<>(List.of(binary(), "--name", name, "--data-dir", dir.toString(),
                    "--listen-client-urls", forwarder != null ? "unix://" + unixSocketName() : clientUrl(),
                    "--advertise-client-urls", clientUrl(),
                    "--listen-peer-urls", peerUrl, "--initial-advertise-peer-urls", peerUrl,
                    "--initial-cluster", cluster, "--initial-cluster-state", "new",
                    "--initial-cluster-token", token,
                    "--heartbeat-interval", "100", "--election-timeout", "500",
                    "--logger", "zap", "--log-outputs", "stderr"));
            if (tls != null) {
                cmd.addAll(List.of("--cert-file", tls.cert().toString(), "--key-file", tls.key().toString()));
            }
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log().toFile()))
                    .directory(root.toFile());
            if (network != null) {
                try {
                    Files.deleteIfExists(root.resolve(unixSocketName()));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                process = network.launch(index, pb);
            } else {
                try {
                    process = pb.start();
                } catch (IOException e) {
                    throw new UncheckedIOException("could not start " + cmd.get(0), e);
                }
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

        /** @return what the member says of itself, or null if it does not answer */
        Status status() {
            String status = post("/v3/maintenance/status", "{}");
            if (status == null || !status.contains("raftTerm")) {
                return null;
            }
            Matcher leader = Pattern.compile("\"leader\":\"?(\\d+)").matcher(status);
            Matcher term = Pattern.compile("\"raftTerm\":\"?(\\d+)").matcher(status);
            return new Status(leader.find() ? leader.group(1) : null, term.find() ? Long.parseLong(term.group(1)) : 0);
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
            if (forwarder != null) {
                forwarder.cutConnections(); // as the connections of a dead process end
            }
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
