package io.dlock.redis;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import javax.net.ssl.SSLSocketFactory;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Protocol;

/**
 * A Redis Sentinel deployment of real processes on free loopback ports, for tests: one primary,
 * two replicas and three sentinels watching them under the master name {@link #MASTER} (quorum 2).
 * The sentinels call a primary down after {@link #DOWN_AFTER_MILLIS} without an answer, so a
 * killed primary is replaced within a few seconds. Data nodes run without persistence, as
 * {@link RedisServer} does; the first primary starts past dlock's lock-delay for the default
 * prefix (a promoted replica has another run id, so it starts one: tests see it).
 *
 * <p>{@link #close()} kills every process, also those paused or killed before.
 */
public final class RedisSentinelGroup implements AutoCloseable {

    /** The name the sentinels watch the primary by. */
    public static final String MASTER = "dlock";
    /** How long the sentinels wait for an answer before they call a node down. */
    static final int DOWN_AFTER_MILLIS = 1000;
    /** How long a sentinel stays in TILT mode (30 s by default) after its clock jumped, as after a pause. */
    static final int TILT_PERIOD_MILLIS = 2000;
    /** How long the group waits for the sentinels to agree, generous for a loaded 2-core machine. */
    private static final long AGREE_MILLIS = 60_000;

    private final List<RedisServer> nodes = new ArrayList<>();
    private final List<RedisServer> sentinels = new ArrayList<>();
    private final List<Integer> killed = new ArrayList<>();
    private final String dataPassword;
    private final String sentinelPassword;
    /** Trusts the nodes' certificate when the group speaks only TLS; null for plain. */
    private final SSLSocketFactory ssl;

    private RedisSentinelGroup(String dataPassword, String sentinelPassword, SSLSocketFactory ssl) {
        this.dataPassword = dataPassword;
        this.sentinelPassword = sentinelPassword;
        this.ssl = ssl;
    }

    /**
     * Starts a group that speaks only TLS: clients, replication and the sentinels' links, all with
     * one certificate (for 127.0.0.1).
     *
     * @param cert the certificate
     * @param key its private key
     * @param ssl trusts the certificate, for the group's own connections
     * @return the started group
     */
    static RedisSentinelGroup startTls(Path cert, Path key, SSLSocketFactory ssl) {
        return start(List.of(), null, null, cert, key, ssl);
    }

    /** @return a started group with no passwords (the benchmark's deployment too) */
    public static RedisSentinelGroup start() {
        return start(List.of(), null, null);
    }

    /**
     * Starts a group.
     *
     * @param dataArgs extra {@code redis-server} options of every data node (e.g. {@code --user ...})
     * @param dataPassword the default user's password on the data nodes ({@code requirepass}), or null
     * @param sentinelPassword the sentinels' password ({@code requirepass} on each), or null
     * @return the started group, every sentinel naming the primary and knowing both replicas
     */
    static RedisSentinelGroup start(List<String> dataArgs, String dataPassword, String sentinelPassword) {
        return start(dataArgs, dataPassword, sentinelPassword, null, null, null);
    }

    private static RedisSentinelGroup start(List<String> dataArgs, String dataPassword, String sentinelPassword,
                                            Path cert, Path key, SSLSocketFactory ssl) {
        RedisSentinelGroup g = new RedisSentinelGroup(dataPassword, sentinelPassword, ssl);
        try {
            List<String> args = new ArrayList<>(List.of("--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"));
            if (dataPassword != null) {
                args.addAll(List.of("--requirepass", dataPassword, "--masterauth", dataPassword));
            }
            args.addAll(dataArgs);
            if (cert != null) {
                args.addAll(List.of("--tls-replication", "yes"));
            }
            RedisServer primary = cert == null ? RedisServer.start(args) : RedisServer.startTls(cert, key, args);
            g.nodes.add(primary);
            if (cert != null) {
                primary.markLockDelayPassed(0, RedisServer.DEFAULT_PREFIX, ssl);
            }
            for (int i = 0; i < 2; i++) {
                List<String> replica = new ArrayList<>(args);
                replica.addAll(List.of("--replicaof", RedisServer.HOST, Integer.toString(primary.port())));
                g.nodes.add(cert == null ? RedisServer.start(replica) : RedisServer.startTls(cert, key, replica));
            }
            for (int i = 0; i < 3; i++) {
                List<String> conf = new ArrayList<>(List.of(
                        "sentinel resolve-hostnames no",
                        "sentinel monitor " + MASTER + " " + RedisServer.HOST + " " + primary.port() + " 2",
                        "sentinel down-after-milliseconds " + MASTER + " " + DOWN_AFTER_MILLIS,
                        "sentinel failover-timeout " + MASTER + " 5000",
                        "sentinel parallel-syncs " + MASTER + " 2"));
                if (dataPassword != null) {
                    conf.add("sentinel auth-pass " + MASTER + " " + dataPassword);
                }
                if (sentinelPassword != null) {
                    conf.add("requirepass " + sentinelPassword); // sentinels use it with each other too
                }
                if (cert != null) {
                    conf.add("tls-replication yes"); // the sentinels reach the data nodes over TLS
                }
                RedisServer sentinel = RedisServer.startSentinel(conf, List.of(), cert, key);
                g.sentinels.add(sentinel);
                try (Jedis j = g.sentinel(sentinel)) {
                    // a paused sentinel wakes up in TILT mode (its clock jumped) and would not fail
                    // over for 30 s: 2 s is enough to have fresh answers from every node (PING each 1 s)
                    j.sendCommand(Protocol.Command.SENTINEL, "DEBUG", "TILT-PERIOD", Integer.toString(TILT_PERIOD_MILLIS));
                }
            }
            g.awaitAgreement();
            return g;
        } catch (RuntimeException | Error e) {
            g.close();
            throw e;
        }
    }

    /** @return the sentinels' host:port list, for a {@code redis-sentinel://} URI */
    String sentinelHosts() {
        List<String> out = new ArrayList<>();
        for (RedisServer s : sentinels) {
            out.add(RedisServer.HOST + ":" + s.port());
        }
        return String.join(",", out);
    }

    /** @return the sentinels' addresses, for clients that take them as a list */
    public List<java.net.InetSocketAddress> sentinelAddresses() {
        List<java.net.InetSocketAddress> out = new ArrayList<>();
        for (RedisServer s : sentinels) {
            out.add(s.address());
        }
        return out;
    }

    /** @return {@code redis-sentinel://SENTINELS/dlock} */
    String uri() {
        return (ssl != null ? "rediss-sentinel://" : "redis-sentinel://") + sentinelHosts() + "/" + MASTER;
    }

    List<RedisServer> sentinels() {
        return sentinels;
    }

    List<RedisServer> nodes() {
        return nodes;
    }

    /** @return the data node the sentinels name as the primary now */
    RedisServer primary() {
        return nodes.get(primaryIndex());
    }

    /** @return the index in {@link #nodes()} of the node the first answering sentinel names */
    int primaryIndex() {
        RuntimeException last = null;
        for (RedisServer s : sentinels) {
            try {
                int port = Integer.parseInt(named(s).get(1));
                for (int i = 0; i < nodes.size(); i++) {
                    if (nodes.get(i).port() == port) {
                        return i;
                    }
                }
                throw new IllegalStateException("the sentinels name an unknown primary port " + port);
            } catch (RuntimeException e) {
                last = e;
            }
        }
        throw new IllegalStateException("no sentinel named the primary", last);
    }

    /** @return the data node's jedis, authenticated */
    Jedis data(RedisServer node) {
        DefaultJedisClientConfig.Builder b = DefaultJedisClientConfig.builder().socketTimeoutMillis(5000);
        if (ssl != null) {
            b.ssl(true).sslSocketFactory(ssl);
        }
        if (dataPassword != null) {
            b.password(dataPassword);
        }
        return new Jedis(new HostAndPort(RedisServer.HOST, node.port()), b.build());
    }

    /** @return a sentinel's jedis, authenticated */
    Jedis sentinel(RedisServer sentinel) {
        DefaultJedisClientConfig.Builder b = DefaultJedisClientConfig.builder().socketTimeoutMillis(5000);
        if (ssl != null) {
            b.ssl(true).sslSocketFactory(ssl);
        }
        if (sentinelPassword != null) {
            b.password(sentinelPassword);
        }
        return new Jedis(new HostAndPort(RedisServer.HOST, sentinel.port()), b.build());
    }

    private List<String> named(RedisServer sentinel) {
        try (Jedis j = sentinel(sentinel)) {
            List<String> a = j.sentinelGetMasterAddrByName(MASTER);
            if (a == null || a.size() != 2) {
                throw new IllegalStateException(sentinel + " names no primary: " + a);
            }
            return a;
        }
    }

    /** Whether a data node answers ROLE with master. */
    boolean isMaster(RedisServer node) {
        try (Jedis j = data(node)) {
            return "master".equals(String.valueOf(j.role().get(0) instanceof byte[] b ? new String(b) : j.role().get(0)));
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * Waits until every sentinel names the same live primary whose ROLE is master, knows the two
     * other data nodes as replicas and the two other sentinels.
     */
    void awaitAgreement() {
        await("the sentinels to agree on a primary with 2 replicas and 2 other sentinels", () -> {
            int index = -1;
            for (RedisServer s : sentinels) {
                try (Jedis j = sentinel(s)) {
                    List<String> a = j.sentinelGetMasterAddrByName(MASTER);
                    int port = a == null ? -1 : Integer.parseInt(a.get(1));
                    int i = indexOf(port);
                    if (i < 0 || index >= 0 && i != index || killed.contains(i)) {
                        return false;
                    }
                    index = i;
                    if (j.sentinelMaster(MASTER).getOrDefault("flags", "").contains("failover")) {
                        return false; // still reconfiguring the replicas after a failover it led
                    }
                    List<Map<String, String>> replicas = j.sentinelReplicas(MASTER);
                    long up = replicas.stream().filter(r -> !r.getOrDefault("flags", "").contains("down")).count();
                    if (up < 2 - killed.size() || j.sentinelSentinels(MASTER).size() < 2) {
                        return false;
                    }
                } catch (RuntimeException e) {
                    return false;
                }
            }
            return isMaster(nodes.get(index));
        });
    }

    /**
     * Waits until every running sentinel names the same primary and none is still in a failover
     * (a sentinel that led one reconfigures the replicas for a while after it names the new
     * primary; a kill then can leave the sentinels disagreeing for long).
     */
    void awaitSettled() {
        await("the sentinels to finish every failover and agree on the primary", () -> {
            int index = -1;
            for (RedisServer s : sentinels) {
                if (s.isPaused()) {
                    continue;
                }
                try (Jedis j = sentinel(s)) {
                    List<String> a = j.sentinelGetMasterAddrByName(MASTER);
                    int i = a == null ? -1 : indexOf(Integer.parseInt(a.get(1)));
                    if (i < 0 || index >= 0 && i != index
                            || j.sentinelMaster(MASTER).getOrDefault("flags", "").contains("failover")) {
                        return false;
                    }
                    index = i;
                } catch (RuntimeException e) {
                    return false;
                }
            }
            return true;
        });
    }

    private int indexOf(int port) {
        for (int i = 0; i < nodes.size(); i++) {
            if (nodes.get(i).port() == port) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Kills the primary with SIGKILL and waits until every sentinel names another node whose ROLE
     * is master. Does not mark the new primary past the lock-delay: tests must see it.
     *
     * @return a label of the node killed
     */
    String killPrimary() {
        awaitSettled();
        int old = primaryIndex();
        RedisServer node = nodes.get(old);
        String label = node.toString();
        node.kill();
        synchronized (killed) {
            killed.add(old);
        }
        awaitNewPrimary(old);
        return label;
    }

    /**
     * Has the sentinels fail over without a crash ({@code SENTINEL FAILOVER}): the primary becomes
     * a replica of the one promoted. Waits as {@link #killPrimary()} does.
     */
    void failover() {
        awaitSettled();
        int old = primaryIndex();
        // refused (INPROG, NOGOODSLAVE) while the sentinels still reconfigure after a former failover
        await("a sentinel to accept SENTINEL FAILOVER", () -> {
            try (Jedis j = sentinel(sentinels.get(0))) {
                j.sentinelFailover(MASTER);
                return true;
            } catch (RuntimeException e) {
                return false;
            }
        });
        awaitNewPrimary(old);
    }

    private void awaitNewPrimary(int old) {
        await("the sentinels to name a new primary after " + nodes.get(old), () -> {
            int index = -1;
            for (RedisServer s : sentinels) {
                if (s.isPaused()) {
                    continue;
                }
                try (Jedis j = sentinel(s)) {
                    List<String> a = j.sentinelGetMasterAddrByName(MASTER);
                    int i = a == null ? -1 : indexOf(Integer.parseInt(a.get(1)));
                    if (i < 0 || i == old || index >= 0 && i != index) {
                        return false;
                    }
                    index = i;
                } catch (RuntimeException e) {
                    return false;
                }
            }
            return index >= 0 && isMaster(nodes.get(index));
        });
    }

    /**
     * Restarts every killed data node as a replica of the current primary (not as an empty
     * primary that a client could write to) and waits until its link to the primary is up.
     */
    void restartKilled() {
        awaitSettled();
        List<Integer> todo;
        synchronized (killed) {
            todo = new ArrayList<>(killed);
        }
        RedisServer primary = primary();
        for (int i : todo) {
            RedisServer node = nodes.get(i);
            node.restart();
            try (Jedis j = data(node)) {
                j.replicaof(RedisServer.HOST, primary.port());
            }
            synchronized (killed) {
                killed.remove(Integer.valueOf(i));
            }
            await(node + " to replicate " + primary, () -> {
                try (Jedis j = data(node)) {
                    return j.info("replication").contains("master_link_status:up");
                } catch (RuntimeException e) {
                    return false;
                }
            });
        }
    }

    /** Pauses (SIGSTOP) every data node and sentinel: nothing answers, and no failover starts. */
    void pauseAll() {
        for (RedisServer s : sentinels) {
            s.pause();
        }
        for (RedisServer n : nodes) {
            if (!killed.contains(nodes.indexOf(n))) {
                n.pause();
            }
        }
    }

    /** Resumes what {@link #pauseAll()} paused: the data nodes first, so that no sentinel sees them down. */
    void resumeAll() {
        for (RedisServer n : nodes) {
            if (n.isPaused()) {
                n.resume();
            }
        }
        for (RedisServer s : sentinels) {
            if (s.isPaused()) {
                s.resume();
            }
        }
    }

    /** Kills every data node (every key is lost); the sentinels keep running. */
    void killAllData() {
        for (int i = 0; i < nodes.size(); i++) {
            nodes.get(i).kill();
            synchronized (killed) {
                if (!killed.contains(i)) {
                    killed.add(i);
                }
            }
        }
    }

    /**
     * Restarts every killed data node after {@link #killAllData()}: the node the sentinels name
     * as the primary comes back a primary (empty), the others as its replicas.
     */
    void restartAllData() {
        int p = primaryIndex();
        RedisServer primary = nodes.get(p);
        if (!primary.isAlive()) {
            primary.restart();
        }
        synchronized (killed) {
            killed.remove(Integer.valueOf(p));
        }
        try (Jedis j = data(primary)) {
            j.replicaofNoOne();
        }
        restartKilled();
    }

    private void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(AGREE_MILLIS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                StringBuilder logs = new StringBuilder();
                for (RedisServer s : sentinels) {
                    String[] lines = s.readLog().split("\n");
                    logs.append("\n--- ").append(s).append(", last lines of its log:\n").append(String.join("\n",
                            java.util.Arrays.copyOfRange(lines, Math.max(0, lines.length - 25), lines.length)));
                }
                throw new IllegalStateException("gave up waiting " + AGREE_MILLIS + " ms for " + what + logs);
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + what, e);
            }
        }
    }

    /** Kills every process of the group and deletes their directories. */
    @Override
    public void close() {
        for (RedisServer s : sentinels) {
            s.close();
        }
        for (RedisServer n : nodes) {
            n.close();
        }
    }

    @Override
    public String toString() {
        return "RedisSentinelGroup{sentinels " + sentinelHosts() + ", nodes " + nodes + "}";
    }
}
