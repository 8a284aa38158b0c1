package io.dlock.zookeeper;

import io.dlock.tck.NetworkNamespaces;
import io.dlock.tck.PeerNetwork;
import io.dlock.tck.ServerProcesses;
import io.dlock.tck.SocketForwarder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A ZooKeeper ensemble of child JVMs (ZooKeeper's own {@code QuorumPeerMain}, from the test
 * classpath, through {@link ZkMemberMain}), for tests: members can be killed (SIGKILL) and
 * restarted with their data, and, where Linux network namespaces can be made (root,
 * {@link NetworkNamespaces#available()}), cut off from their peers while their clients still reach
 * them ({@link #isolate(int)}).
 *
 * <p>Timing: 200 ms ticks ({@link ZkServers#TICK_MS}), {@code syncLimit} 3 (a member that hears
 * nothing from its leader, or a leader that hears from no quorum, gives up after 600-800 ms and
 * drops its clients), {@code initLimit} 10. Two JVM options keep elections short when a peer is
 * unreachable: {@code zookeeper.cnxTimeout} 500 ms (ZooKeeper connects to election peers one at a
 * time, each connect waiting up to this long, 5 s by default, for an answer that never comes
 * from a cut-off member) and {@code zookeeper.fastleader.maxNotificationInterval} 1 s (a member
 * that looks for a leader alone backs off its notifications up to this, 60 s by default, so that
 * it rejoins within about a second of being reconnected).
 *
 * <p>With namespaces, each member runs in a network namespace of its own on a {@link PeerNetwork}
 * ({@code 10.78.0.0/24}, member {@code i} at {@code 10.78.0.(i+1)}), with its quorum and election
 * ports on that address. Its client port listens on {@code 127.0.0.1} inside its namespace, and
 * clients reach it through two {@link SocketForwarder}s: one in the member's JVM from a Unix socket
 * (a file in the ensemble's directory) to that port, and one in the test JVM from a free loopback
 * port to the Unix socket. So the client path never crosses the peer network, and cutting the
 * member's bridge port leaves its clients connected to it. Without namespaces, the members listen
 * on free loopback ports and cannot be isolated. Data lives on {@code /dev/shm} when it exists
 * (cheap fsync). Every process is killed at the end, or when the JVM exits.
 */
public final class ZkEnsemble implements AutoCloseable {

    /** The peer network's address block, used only inside the namespaces (etcd's tests use 10.77.0). */
    static final String PEER_NET = "10.78.0";

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(30);

    /** Every member process the tests started and did not stop yet: killed if the JVM exits early. */
    private static final Set<Process> RUNNING = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(Process::destroyForcibly),
                "zk-ensemble-cleanup"));
    }

    private final Path root;
    /** The members' network, or null without namespaces. */
    private final PeerNetwork network;
    private final List<Member> members = new ArrayList<>();

    private ZkEnsemble(int size, boolean namespaces) {
        Path shm = Path.of("/dev/shm");
        Path base = Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
        try {
            this.root = Files.createTempDirectory(base, "dlock-zk-ensemble-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.network = namespaces ? PeerNetwork.start(PEER_NET) : null;
        for (int i = 0; i < size; i++) {
            members.add(new Member(i));
        }
    }

    /**
     * Starts an ensemble and waits until every member serves (one leads, the others follow). The
     * members run in network namespaces where that is possible.
     *
     * @param size the number of members
     * @return the ensemble
     */
    public static ZkEnsemble start(int size) {
        ZkEnsemble e = new ZkEnsemble(size, size > 1 && NetworkNamespaces.available());
        try {
            for (Member m : e.members) {
                m.writeConfig();
            }
            for (Member m : e.members) {
                m.launch();
            }
            e.awaitSettled(START_TIMEOUT);
            return e;
        } catch (RuntimeException | Error ex) {
            e.close();
            throw ex;
        }
    }

    /** @return the number of members */
    public int size() {
        return members.size();
    }

    /**
     * @param i the member's index, from 0
     * @return the member
     */
    public Member member(int i) {
        return members.get(i);
    }

    /** @return every member's client address on loopback, in index order */
    public List<InetSocketAddress> addresses() {
        return members.stream().map(Member::address).collect(Collectors.toList());
    }

    /** @return {@code 127.0.0.1:P1,127.0.0.1:P2,...} */
    public String connectString() {
        return members.stream().map(m -> "127.0.0.1:" + m.clientPort).collect(Collectors.joining(","));
    }

    /** @return the index of the member that says it leads now, or -1 (during an election) */
    public int leader() {
        for (Member m : members) {
            if (m.running() && m.mode().equals("leader")) {
                return m.index;
            }
        }
        return -1;
    }

    /**
     * Waits for a leader other than {@code not}; an election with 200 ms ticks takes about a
     * second, the bound is generous for a loaded machine.
     *
     * @param not a member that must not be the answer, or -1
     * @return the leader's index
     * @throws IllegalStateException if none within 30 s
     */
    public int awaitLeader(int not) {
        long deadline = System.nanoTime() + SETTLE_TIMEOUT.toNanos();
        while (System.nanoTime() - deadline < 0) {
            int leader = leader();
            if (leader >= 0 && leader != not) {
                return leader;
            }
            sleep(50);
        }
        throw new IllegalStateException("no leader" + (not >= 0 ? " other than member " + not : "") + " within "
                + SETTLE_TIMEOUT.toSeconds() + " s: " + modes());
    }

    /** @return whether a member can be cut off from its peers: the members run in network namespaces */
    public boolean canIsolate() {
        return network != null;
    }

    /**
     * Cuts a member off from its peers, both ways, while its clients still reach it, and waits
     * until the ensemble shows it: the member answers {@code srvr} but serves no session (it has
     * left its quorum and dropped its clients), and the others serve with a leader among them.
     *
     * @param i the member
     * @throws UnsupportedOperationException without namespaces
     * @throws IllegalStateException if the ensemble does not show the cut within 30 s
     */
    public void isolate(int i) {
        if (network == null) {
            throw new UnsupportedOperationException("this ensemble does not run in network namespaces");
        }
        network.isolate(i);
        long deadline = System.nanoTime() + SETTLE_TIMEOUT.toNanos();
        while (System.nanoTime() - deadline < 0) {
            if (members.get(i).mode().equals("not serving") && othersServe(i)) {
                return;
            }
            sleep(20);
        }
        throw new IllegalStateException("member " + i + " was cut off from its peers, but the ensemble did not show it "
                + "within " + SETTLE_TIMEOUT.toSeconds() + " s: " + modes());
    }

    /** Whether every running member but {@code except} serves, one of them as the leader. */
    private boolean othersServe(int except) {
        int leaders = 0;
        for (Member m : members) {
            if (m.index == except || !m.running()) {
                continue;
            }
            String mode = m.mode();
            if (mode.equals("leader")) {
                leaders++;
            } else if (!mode.equals("follower")) {
                return false;
            }
        }
        return leaders == 1;
    }

    /**
     * Reconnects every isolated member to its peers and waits until every running member serves
     * again, with one leader.
     *
     * @throws IllegalStateException if they do not within 30 s
     */
    public void heal() {
        if (network == null || network.heal().isEmpty()) {
            return;
        }
        awaitSettled(SETTLE_TIMEOUT);
    }

    /** @return the members cut off from their peers now */
    public Set<Integer> isolated() {
        return network == null ? Set.of() : network.isolated();
    }

    /** Waits until every running member serves, one of them as the leader. */
    void awaitSettled(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() - deadline < 0) {
            for (Member m : members) {
                if (m.process != null && !m.process.isAlive() && !m.killed) {
                    throw new IllegalStateException("ZooKeeper member " + m.index + " exited with "
                            + m.process.exitValue() + "; its log:\n" + m.readLog());
                }
            }
            if (othersServe(-1)) {
                return;
            }
            sleep(50);
        }
        throw new IllegalStateException("the ensemble did not settle on one leader within " + timeout.toSeconds()
                + " s: " + modes());
    }

    /** @return each member's mode, for messages */
    public String modes() {
        return members.stream().map(m -> m.index + "=" + (m.running() ? m.mode() : "down"))
                .collect(Collectors.joining(", ", "[", "]"));
    }

    /** Kills every member, the forwarders and the peer network (so every namespace ends), and deletes the data. */
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

    @Override
    public String toString() {
        return "ZkEnsemble{" + connectString() + (network != null ? ", " + network : "") + "}";
    }

    /** One member: a child JVM with its own data directory, client port and quorum ports. */
    public final class Member {
        final int index;
        final int clientPort;
        private final int peerPort;
        private final int electionPort;
        private final Path dir;
        /** In front of the member's Unix socket for clients, with namespaces; else null. */
        private final SocketForwarder forwarder;
        private Process process;
        /** Whether the process was killed on purpose (and not restarted since). */
        private volatile boolean killed;

        private Member(int index) {
            this.index = index;
            this.dir = root.resolve("m" + index);
            this.forwarder = network != null ? SocketForwarder.toUnixSocket(socket()) : null;
            // with namespaces, the client port is on 127.0.0.1 in the member's namespace: the forwarder's number
            this.clientPort = forwarder != null ? forwarder.port() : ServerProcesses.freeLoopbackPort();
            this.peerPort = ServerProcesses.freeLoopbackPort();
            this.electionPort = ServerProcesses.freeLoopbackPort();
        }

        private Path socket() {
            return root.resolve("m" + index + ".sock");
        }

        /** @return where the peers reach this member: its namespace's address, or loopback */
        String peerHost() {
            return network != null ? network.address(index) : "127.0.0.1";
        }

        /** @return the client address on loopback in the test JVM's namespace */
        public InetSocketAddress address() {
            return new InetSocketAddress("127.0.0.1", clientPort);
        }

        /** @return whether the process runs */
        public boolean running() {
            return process != null && process.isAlive();
        }

        /** @return the answer to {@code srvr}, or "" if the member does not answer */
        public String srvr() {
            return ZkServers.srvr(clientPort);
        }

        /**
         * @return {@code leader}, {@code follower}, {@code not serving} (it answers but has no
         *     quorum), or {@code down} (no answer)
         */
        public String mode() {
            String srvr = srvr();
            if (srvr.isEmpty()) {
                return "down";
            }
            if (srvr.contains("Mode: leader")) {
                return "leader";
            }
            if (srvr.contains("Mode: follower")) {
                return "follower";
            }
            return srvr.contains("not currently serving") ? "not serving" : srvr.trim();
        }

        private void writeConfig() {
            List<String> lines = new ArrayList<>(List.of(
                    "tickTime=" + ZkServers.TICK_MS,
                    "initLimit=10",
                    "syncLimit=3",
                    "dataDir=" + dir.resolve("data"),
                    "clientPort=" + clientPort,
                    "clientPortAddress=127.0.0.1",
                    "admin.enableServer=false",
                    "4lw.commands.whitelist=*"));
            for (Member m : members) {
                lines.add("server." + (m.index + 1) + "=" + m.peerHost() + ":" + m.peerPort + ":" + m.electionPort);
            }
            try {
                Files.createDirectories(dir.resolve("data"));
                Files.writeString(dir.resolve("data").resolve("myid"), Integer.toString(index + 1));
                Files.writeString(dir.resolve("zoo.cfg"), String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private Path log() {
            return dir.resolve("server.log");
        }

        String readLog() {
            try {
                return Files.exists(log()) ? Files.readString(log(), StandardCharsets.UTF_8) : "(no log)";
            } catch (IOException e) {
                return "(log unreadable: " + e + ")";
            }
        }

        private synchronized void launch() {
            List<String> cmd = ZkProcess.serverJvm(List.of("-XX:TieredStopAtLevel=1",
                            "-Dzookeeper.cnxTimeout=500", "-Dzookeeper.fastleader.maxNotificationInterval=1000",
                            "-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper=info"),
                    List.of(ZkMemberMain.class.getName(), forwarder != null ? socket().toString() : "-",
                            Integer.toString(clientPort), dir.resolve("zoo.cfg").toString()));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log().toFile()));
            if (network != null) {
                process = network.launch(index, pb);
            } else {
                try {
                    process = pb.start();
                } catch (IOException e) {
                    throw new UncheckedIOException("could not start ZooKeeper member " + index, e);
                }
            }
            RUNNING.add(process);
            killed = false;
        }

        /** Kills the process with SIGKILL and waits until it is gone. Its data stays. */
        public synchronized void kill() {
            killed = true;
            RUNNING.remove(process);
            ServerProcesses.killAndWait(process, "ZooKeeper member " + index);
            if (forwarder != null) {
                forwarder.cutConnections(); // as the connections of a dead process end
            }
        }

        /**
         * Starts the member again with its data after {@link #kill()} and waits until the
         * ensemble has settled with it (it follows, or leads).
         */
        public void restart() {
            synchronized (this) {
                if (running()) {
                    throw new IllegalStateException("restart() needs a killed member");
                }
                launch();
            }
            awaitSettled(START_TIMEOUT);
        }

        private synchronized void stop() {
            if (process != null) {
                RUNNING.remove(process);
                if (process.isAlive()) {
                    ServerProcesses.killAndWait(process, "ZooKeeper member " + index);
                }
            }
        }

        @Override
        public String toString() {
            return "member " + index + " (client 127.0.0.1:" + clientPort + ", pid "
                    + (process == null ? "-" : process.pid()) + ")";
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
