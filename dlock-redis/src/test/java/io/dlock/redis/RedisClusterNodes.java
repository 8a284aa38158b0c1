package io.dlock.redis;

import io.dlock.tck.TestTiming;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import javax.net.ssl.SSLSocketFactory;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.util.SafeEncoder;

/**
 * A Redis Cluster for tests: 3 primaries and 3 replicas, each a {@link RedisServer} on a free
 * loopback port with its own free cluster-bus port, without persistence. Made by hand: the slots
 * in three ranges with {@code CLUSTER ADDSLOTSRANGE}, distinct config epochs, {@code CLUSTER MEET}
 * and {@code CLUSTER REPLICATE}, then it waits until every node says {@code cluster_state:ok} and
 * every replica's link is up.
 *
 * <p>The node timeout is 5 s: longer than the TCK's longest pause of every node (3 s), so a pause
 * fails nothing over, while a killed primary is replaced in about 6–7 s (the timeout, then the
 * replica's election). {@link #close()} kills every node, also after a failed start.
 */
public final class RedisClusterNodes implements AutoCloseable {

    /** The node timeout; see the class comment. */
    static final int NODE_TIMEOUT_MILLIS = 5000;
    static final int PRIMARIES = 3;
    private static final Duration READY = Duration.ofSeconds(60);
    private static final String LOCK_KEY_PATTERN = "*lock:*";

    private final List<RedisServer> nodes = new ArrayList<>();
    private final List<Integer> busPorts = new ArrayList<>();
    private final List<RedisServer> killed = new ArrayList<>();
    private final String password;
    /** The TLS socket factory of the test's own connections, or null for plain ones. */
    private final SSLSocketFactory ssl;

    private RedisClusterNodes(String password, SSLSocketFactory ssl) {
        this.password = password;
        this.ssl = ssl;
    }

    /** @return a started cluster with no password (the benchmark's deployment too) */
    public static RedisClusterNodes start() {
        return start(List.of(), null);
    }

    /**
     * Starts a cluster.
     *
     * @param extraArgs more redis-server arguments for every node (ACL users, say)
     * @param password the default user's password ({@code requirepass} and {@code masterauth}), or null
     */
    static RedisClusterNodes start(List<String> extraArgs, String password) {
        return start(extraArgs, password, null, null, null);
    }

    /**
     * Starts a cluster whose nodes speak only TLS, to clients, replicas and on the cluster bus
     * ({@code tls-cluster}, {@code tls-replication}).
     *
     * @param cert the nodes' certificate, also the CA
     * @param key its key
     * @param trusting a socket factory that trusts the certificate, for the test's own connections
     */
    static RedisClusterNodes startTls(Path cert, Path key, SSLSocketFactory trusting) {
        return start(List.of(), null, cert, key, trusting);
    }

    private static RedisClusterNodes start(List<String> extraArgs, String password, Path cert, Path key,
                                           SSLSocketFactory trusting) {
        RedisClusterNodes c = new RedisClusterNodes(password, trusting);
        try {
            for (int i = 0; i < 2 * PRIMARIES; i++) {
                int bus = RedisServer.freePort();
                List<String> args = new ArrayList<>(List.of("--cluster-enabled", "yes", "--cluster-config-file",
                        "nodes.conf", "--cluster-node-timeout", Integer.toString(NODE_TIMEOUT_MILLIS), "--cluster-port",
                        Integer.toString(bus), "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"));
                if (password != null) {
                    args.addAll(List.of("--requirepass", password, "--masterauth", password));
                }
                args.addAll(extraArgs);
                if (cert != null) {
                    args.addAll(List.of("--tls-cluster", "yes", "--tls-replication", "yes"));
                    c.nodes.add(RedisServer.startTls(cert, key, args));
                } else {
                    c.nodes.add(RedisServer.startUnmarked(args));
                }
                c.busPorts.add(bus);
            }
            c.create();
            return c;
        } catch (RuntimeException | Error e) {
            c.close();
            throw e;
        }
    }

    private void create() {
        int per = 16384 / PRIMARIES;
        for (int i = 0; i < PRIMARIES; i++) {
            int from = i * per;
            int to = i == PRIMARIES - 1 ? 16383 : (i + 1) * per - 1;
            try (Jedis j = jedis(i)) {
                j.sendCommand(Protocol.Command.CLUSTER, "ADDSLOTSRANGE", Integer.toString(from), Integer.toString(to));
            }
        }
        for (int i = 0; i < nodes.size(); i++) {
            try (Jedis j = jedis(i)) {
                j.sendCommand(Protocol.Command.CLUSTER, "SET-CONFIG-EPOCH", Integer.toString(i + 1));
            }
        }
        try (Jedis j = jedis(0)) {
            for (int i = 1; i < nodes.size(); i++) {
                j.sendCommand(Protocol.Command.CLUSTER, "MEET", RedisServer.HOST, Integer.toString(nodes.get(i).port()),
                        Integer.toString(busPorts.get(i)));
            }
        }
        TestTiming.await("every node knows the other five", READY, () -> {
            for (int i = 0; i < nodes.size(); i++) {
                if (clusterNodes(i).stream().filter(l -> l.contains(" connected")).count() != nodes.size()) {
                    return false;
                }
            }
            return true;
        });
        for (int i = PRIMARIES; i < nodes.size(); i++) {
            String primaryId = nodeId(i - PRIMARIES);
            try (Jedis j = jedis(i)) {
                j.sendCommand(Protocol.Command.CLUSTER, "REPLICATE", primaryId);
            }
        }
        awaitHealthy();
    }

    /** Waits until every live node says {@code cluster_state:ok} and every live replica's link is up. */
    void awaitHealthy() {
        TestTiming.await("the cluster is ok and every replica in sync", READY, () -> {
            for (int i = 0; i < nodes.size(); i++) {
                if (killed.contains(nodes.get(i))) {
                    continue;
                }
                try (Jedis j = jedis(i)) {
                    if (!j.clusterInfo().contains("cluster_state:ok")) {
                        return false;
                    }
                    String repl = j.info("replication");
                    if (repl.contains("role:slave") && !repl.contains("master_link_status:up")) {
                        return false;
                    }
                } catch (RuntimeException e) {
                    return false;
                }
            }
            return true;
        });
    }

    /** @return the node's lines of {@code CLUSTER NODES} */
    List<String> clusterNodes(int i) {
        try (Jedis j = jedis(i)) {
            return List.of(j.clusterNodes().split("\n"));
        } catch (RuntimeException e) {
            return List.of();
        }
    }

    /** @return the node's cluster id */
    String nodeId(int i) {
        try (Jedis j = jedis(i)) {
            return j.clusterMyId();
        }
    }

    /** @return a connection to node i; the caller closes it */
    Jedis jedis(int i) {
        DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder().timeoutMillis(2000);
        if (ssl != null) {
            config.ssl(true).sslSocketFactory(ssl);
        }
        if (password != null) {
            config.password(password);
        }
        return new Jedis(new HostAndPort(RedisServer.HOST, nodes.get(i).port()), config.build());
    }

    int size() {
        return nodes.size();
    }

    RedisServer node(int i) {
        return nodes.get(i);
    }

    /** @return every node's address, for clients that take the seeds as a list */
    public List<java.net.InetSocketAddress> nodeAddresses() {
        List<java.net.InetSocketAddress> out = new ArrayList<>();
        for (RedisServer n : nodes) {
            out.add(n.address());
        }
        return out;
    }

    /** @return {@code host:port,...} of every node, for a URI's seeds */
    String seeds() {
        StringBuilder b = new StringBuilder();
        for (RedisServer n : nodes) {
            b.append(b.length() == 0 ? "" : ",").append(RedisServer.HOST).append(':').append(n.port());
        }
        return b.toString();
    }

    /** @return whether node i is alive and says it is a primary */
    boolean isPrimary(int i) {
        if (killed.contains(nodes.get(i))) {
            return false;
        }
        try (Jedis j = jedis(i)) {
            return j.info("replication").contains("role:master");
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** @return the index of the node that serves a slot as primary, asked of a live primary */
    int ownerOf(int slot) {
        for (int i = 0; i < nodes.size(); i++) {
            if (!isPrimary(i)) {
                continue;
            }
            try (Jedis j = jedis(i)) {
                for (Object range : j.clusterSlots()) {
                    List<?> r = (List<?>) range;
                    if ((Long) r.get(0) <= slot && slot <= (Long) r.get(1)) {
                        int port = ((Long) ((List<?>) r.get(2)).get(1)).intValue();
                        return indexOfPort(port);
                    }
                }
            }
        }
        throw new IllegalStateException("no live primary names the owner of slot " + slot);
    }

    private int indexOfPort(int port) {
        for (int i = 0; i < nodes.size(); i++) {
            if (nodes.get(i).port() == port) {
                return i;
            }
        }
        throw new IllegalStateException("no node on port " + port);
    }

    /**
     * Marks every slot's lock-delay as passed on its primary (the slotted markers, each naming its
     * primary's run id), as a cluster that served locks long ago would have them: tests of a fresh
     * cluster need not wait a lock-delay per slot. Replicated to the replicas, but a promoted
     * replica has another run id, so a failover still starts a lock-delay.
     *
     * @param prefix the key prefix
     */
    public void markLockDelayPassed(String prefix) {
        String script = "local run = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')\n"
                + "for i, k in ipairs(KEYS) do redis.call('SET', k, run .. ' 0 0') end\nreturn #KEYS";
        for (int slot = 0; slot < 16384; ) {
            int owner = ownerOf(slot);
            try (Jedis j = jedis(owner)) {
                // the owner's whole range, one script call per slot (keys of one call share a slot)
                redis.clients.jedis.Pipeline p = j.pipelined();
                int s = slot;
                List<Object> ranges = j.clusterSlots();
                int end = slot;
                for (Object range : ranges) {
                    List<?> r = (List<?>) range;
                    if ((Long) r.get(0) <= slot && slot <= (Long) r.get(1)) {
                        end = ((Long) r.get(1)).intValue();
                    }
                }
                for (; s <= end; s++) {
                    p.eval(script, List.of(prefix + "{" + TestTags.tag(s) + "}epoch"), List.of());
                }
                p.sync();
                slot = end + 1;
            }
        }
    }

    /** @return the index of the primary serving a key matching {@code *lock:*}, or -1 if none does */
    int primaryWithLockKey() {
        for (int i = 0; i < nodes.size(); i++) {
            if (!isPrimary(i)) {
                continue;
            }
            try (Jedis j = jedis(i)) {
                if (!j.keys(LOCK_KEY_PATTERN).isEmpty()) {
                    return i;
                }
            } catch (RuntimeException e) {
                // not answering: not the one
            }
        }
        return -1;
    }

    /**
     * Kills (SIGKILL) a primary: the one serving a lock key (polled for up to 2 s), else the owner
     * of slot 0. Returns once one of its replicas is a primary and the cluster is ok again.
     *
     * @return the killed node's index
     */
    int killPrimaryHoldingALock() {
        int victim = -1;
        long until = System.nanoTime() + Duration.ofSeconds(2).toNanos();
        while (victim < 0 && System.nanoTime() - until < 0) {
            victim = primaryWithLockKey();
            if (victim < 0) {
                TestTiming.sleep(20);
            }
        }
        if (victim < 0) {
            victim = ownerOf(0);
        }
        killPrimary(victim);
        return victim;
    }

    /**
     * Kills a primary and waits until one of its replicas took over and the cluster is ok.
     *
     * @param i the primary's index
     */
    void killPrimary(int i) {
        String id = nodeId(i);
        List<Integer> replicas = new ArrayList<>();
        for (int r = 0; r < nodes.size(); r++) {
            if (r != i && !killed.contains(nodes.get(r))) {
                for (String line : clusterNodes(r)) {
                    if (line.contains("myself") && line.contains(" " + id + " ")) {
                        replicas.add(r);
                    }
                }
            }
        }
        nodes.get(i).kill();
        killed.add(nodes.get(i));
        TestTiming.await("a replica of the killed primary took over", READY,
                () -> replicas.stream().anyMatch(this::isPrimary));
        awaitHealthy();
    }

    /**
     * Restarts every killed node (empty, with its nodes.conf) and waits until it rejoined as a
     * replica in sync.
     */
    void restartKilled() {
        for (RedisServer n : List.copyOf(killed)) {
            n.restart();
            killed.remove(n);
        }
        awaitHealthy();
    }

    /** Pauses (SIGSTOP) every node. */
    void pauseAll() {
        forLive(RedisServer::pause);
    }

    /** Resumes (SIGCONT) every node. */
    void resumeAll() {
        forLive(RedisServer::resume);
    }

    /** Kills every node: every key is lost (no persistence); nodes.conf stays. */
    void killAll() {
        for (RedisServer n : nodes) {
            if (!killed.contains(n)) {
                n.kill();
                killed.add(n);
            }
        }
    }

    /** Restarts every killed node and waits until the cluster is ok. */
    void restartAll() {
        restartKilled();
    }

    private void forLive(Consumer<RedisServer> action) {
        for (RedisServer n : nodes) {
            if (!killed.contains(n)) {
                action.accept(n);
            }
        }
    }

    /**
     * Moves a slot from its owner to another primary step by step, as {@code redis-cli --cluster
     * reshard} does, calling the hook after each step: 1 {@code SETSLOT IMPORTING} on the target,
     * 2 {@code SETSLOT MIGRATING} on the source, 3 {@code MIGRATE} of each batch of keys, 4
     * {@code SETSLOT NODE} on the target, the source, then the other primaries.
     *
     * @param slot the slot
     * @param target the new owner's index
     * @param hook told the step just done (1 to 4), may sleep or assert
     */
    void migrate(int slot, int target, Consumer<Integer> hook) {
        migrate(slot, target, 10, hook);
    }

    /**
     * {@link #migrate(int, int, Consumer)}, moving {@code batch} keys per {@code MIGRATE}.
     *
     * @param slot the slot
     * @param target the new owner's index
     * @param batch keys per MIGRATE: 1 leaves the slot's keys split between the nodes at step 3
     * @param hook told the step just done (1 to 4)
     */
    void migrate(int slot, int target, int batch, Consumer<Integer> hook) {
        int source = ownerOf(slot);
        if (source == target) {
            throw new IllegalArgumentException("slot " + slot + " is on node " + target + " already");
        }
        String sourceId = nodeId(source);
        String targetId = nodeId(target);
        String s = Integer.toString(slot);
        try (Jedis t = jedis(target)) {
            t.sendCommand(Protocol.Command.CLUSTER, "SETSLOT", s, "IMPORTING", sourceId);
        }
        hook.accept(1);
        try (Jedis src = jedis(source)) {
            src.sendCommand(Protocol.Command.CLUSTER, "SETSLOT", s, "MIGRATING", targetId);
            hook.accept(2);
            while (true) {
                @SuppressWarnings("unchecked")
                List<Object> keys = (List<Object>) src.sendCommand(Protocol.Command.CLUSTER, "GETKEYSINSLOT", s,
                        Integer.toString(batch));
                if (keys.isEmpty()) {
                    break;
                }
                List<String> cmd = new ArrayList<>(List.of(RedisServer.HOST, Integer.toString(nodes.get(target).port()),
                        "", "0", "5000"));
                if (password != null) {
                    cmd.addAll(List.of("AUTH", password));
                }
                cmd.add("KEYS");
                for (Object k : keys) {
                    cmd.add(SafeEncoder.encode((byte[]) k));
                }
                src.sendCommand(Protocol.Command.MIGRATE, cmd.toArray(String[]::new));
                hook.accept(3);
            }
        }
        // the target first, then the source, then the others (as redis-cli does): a source told first would
        // send clients to a target that still refuses them without ASKING
        List<Integer> order = new ArrayList<>(List.of(target, source));
        for (int i = 0; i < nodes.size(); i++) {
            if (i != target && i != source && isPrimary(i)) {
                order.add(i);
            }
        }
        for (int i : order) {
            try (Jedis j = jedis(i)) {
                j.sendCommand(Protocol.Command.CLUSTER, "SETSLOT", s, "NODE", targetId);
            }
        }
        hook.accept(4);
    }

    /** Kills every node and deletes its directory. Never throws. */
    @Override
    public void close() {
        for (RedisServer n : nodes) {
            try {
                n.close();
            } catch (RuntimeException e) {
                // the others are closed anyway
            }
        }
    }

    @Override
    public String toString() {
        return "RedisClusterNodes{" + seeds() + "}";
    }

    /** The slot tags, computed here as the production code does: a test must not borrow the code it checks. */
    static final class TestTags {
        private static final String[] TAGS = new String[16384];

        static {
            int left = 16384;
            for (int n = 0; left > 0; n++) {
                int slot = redis.clients.jedis.util.JedisClusterCRC16.getCRC16(Integer.toString(n)) & 16383;
                if (TAGS[slot] == null) {
                    TAGS[slot] = Integer.toString(n);
                    left--;
                }
            }
        }

        private TestTags() {
        }

        static String tag(int slot) {
            return TAGS[slot];
        }
    }
}
