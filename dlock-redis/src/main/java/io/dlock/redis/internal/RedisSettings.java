package io.dlock.redis.internal;

import io.dlock.Capability;
import io.dlock.LockOptions;
import io.dlock.spi.BackendUri;
import io.dlock.spi.support.UriReader;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A dlock-redis URI, checked and with its defaults applied: {@code redis://} and {@code rediss://}
 * (one primary), {@code redis-sentinel://} (a primary found through Sentinel),
 * {@code redis-cluster://} (a Redis Cluster) and {@code redlock://} (independent primaries, a
 * majority), each with its TLS form. Immutable. Its {@link #toString()} never shows the password.
 *
 * <p>{@link #host} and {@link #port} are the address this instance talks to: the one server of
 * {@code redis://}; for the other modes a per-node copy made by {@link #forNode}, while the settings
 * read from the URI hold the first host there.
 */
final class RedisSettings {

    /** How the URI's hosts are used. */
    enum Mode {
        /** One primary, the only host of {@code redis://}. */
        STANDALONE("redis", "rediss"),
        /** The hosts are sentinels; the path names the primary they watch. */
        SENTINEL("redis-sentinel", "rediss-sentinel"),
        /** The hosts are seed nodes of one Redis Cluster. */
        CLUSTER("redis-cluster", "rediss-cluster"),
        /** The hosts are independent primaries; a lock is held on a majority of them. */
        REDLOCK("redlock", "redlocks");

        final String plain;
        final String secure;

        Mode(String plain, String secure) {
            this.plain = plain;
            this.secure = secure;
        }

        static Mode of(String scheme) {
            for (Mode m : values()) {
                if (m.plain.equals(scheme) || m.secure.equals(scheme)) {
                    return m;
                }
            }
            return null;
        }
    }

    /** Every scheme dlock-redis serves. */
    static final Set<String> SCHEMES = Set.of("redis", "rediss", "redis-sentinel", "rediss-sentinel", "redis-cluster",
            "rediss-cluster", "redlock", "redlocks");
    static final int DEFAULT_SENTINEL_PORT = 26379;
    /** The fewest nodes {@code redlock://} takes: with fewer, a majority is every node. */
    static final int MIN_REDLOCK_NODES = 3;
    static final int MAX_HOSTS = 64;

    static final int DEFAULT_PORT = 6379;
    static final String DEFAULT_PREFIX = "dlock:";
    static final int DEFAULT_POOL_SIZE = 16;
    static final int MAX_POOL_SIZE = 1024;

    static final int MAX_WAIT_REPLICAS = 100;

    /**
     * The lock-delay when the URI sets none and the client's default lease is not longer: the
     * default lease time, so that a client with default settings can take the leases it asks for.
     */
    static final Duration DEFAULT_LOCK_DELAY = LockOptions.DEFAULT_LEASE_TIME;
    /** The shortest lock-delay other than zero: the shortest lease the backend grants. */
    static final Duration MIN_LOCK_DELAY = Duration.ofMillis(10);
    /** The longest lock-delay, which is also the longest lease then: the core's default bound. */
    static final Duration MAX_LOCK_DELAY = Duration.ofDays(365);
    /** The longest lease without a lock-delay: the core's default bound. */
    static final Duration UNBOUNDED_LEASE = Duration.ofDays(365);

    private static final Set<String> KNOWN_PARAMS = Set.of("prefix", "poolSize", "waitReplicas", "lockDelay");
    private static final Set<String> SENTINEL_PARAMS = Set.of("prefix", "poolSize", "waitReplicas", "lockDelay",
            "database", "sentinelUser", "sentinelPassword");
    private static final Set<String> CLUSTER_PARAMS = Set.of("prefix", "poolSize", "waitReplicas", "lockDelay");
    private static final Set<String> REDLOCK_PARAMS = Set.of("prefix", "poolSize", "lockDelay");

    final BackendUri uri;
    final Mode mode;
    /** The URI's hosts, each with its port: the one server, the sentinels, the seeds, or the Redlock nodes. */
    final List<BackendUri.HostPort> hosts;
    /** The primary's name that the sentinels watch ({@code SENTINEL} only, else null). */
    final String masterName;
    /** The sentinels' own credentials ({@code SENTINEL} only; null when the sentinels need none). */
    final String sentinelUser;
    final String sentinelPassword;
    final boolean tls;
    final String host;
    final int port;
    final int database;
    final String user;
    final String password;
    final String prefix;
    final int poolSize;
    final int waitReplicas;
    /**
     * How long after the server lost its data (or came up as another process) no lock is granted,
     * and the longest lease granted; zero turns the lock-delay off (and leases are then unbounded).
     */
    final Duration lockDelay;
    /** Whether these settings name one server (the one of {@code redis://}, or a {@link #forNode} copy). */
    private final boolean oneNode;

    private RedisSettings(BackendUri uri, Mode mode, List<BackendUri.HostPort> hosts, String masterName,
                          String sentinelUser, String sentinelPassword, boolean tls, String host, int port,
                          int database, String user, String password, String prefix, int poolSize,
                          int waitReplicas, Duration lockDelay, boolean oneNode) {
        this.oneNode = oneNode;
        this.uri = uri;
        this.mode = mode;
        this.hosts = hosts;
        this.masterName = masterName;
        this.sentinelUser = sentinelUser;
        this.sentinelPassword = sentinelPassword;
        this.tls = tls;
        this.host = host;
        this.port = port;
        this.database = database;
        this.user = user;
        this.password = password;
        this.prefix = prefix;
        this.poolSize = poolSize;
        this.waitReplicas = waitReplicas;
        this.lockDelay = lockDelay;
    }

    /**
     * Checks a parsed URI.
     *
     * @param uri the URI
     * @param defaultLease the client's default lease time: the lock-delay is at least this long
     *     unless the URI sets it
     * @throws IllegalArgumentException naming the part that is wrong, with the URI redacted
     */
    static RedisSettings from(BackendUri uri, Duration defaultLease) {
        Mode mode = Mode.of(uri.scheme());
        UriReader r = UriReader.of(uri, "dlock-redis", mode == Mode.SENTINEL ? SENTINEL_PARAMS
                : mode == Mode.CLUSTER ? CLUSTER_PARAMS : mode == Mode.REDLOCK ? REDLOCK_PARAMS : KNOWN_PARAMS);
        String scheme = r.scheme(SCHEMES.stream().sorted().toArray(String[]::new));
        mode = Mode.of(scheme);
        boolean tls = scheme.equals(mode.secure);
        List<BackendUri.HostPort> hosts;
        int database = 0;
        String masterName = null;
        String sentinelUser = null;
        String sentinelPassword = null;
        switch (mode) {
            case STANDALONE -> {
                if (uri.hosts().size() > 1) {
                    throw r.invalid("host", "must be one host for " + scheme + "://, but the uri names "
                            + uri.hosts().size() + " hosts " + uri.hosts() + "; for several use " + Mode.SENTINEL.plain
                            + "://SENTINELS/MASTER_NAME, " + Mode.CLUSTER.plain + "://SEEDS or " + Mode.REDLOCK.plain
                            + "://NODES");
                }
                hosts = r.hosts(DEFAULT_PORT, 1, scheme + "://host:port");
                database = parseDatabase(r);
            }
            case SENTINEL -> {
                hosts = r.hosts(DEFAULT_SENTINEL_PORT, MAX_HOSTS, scheme + "://sentinel1:26379,sentinel2:26379/MASTER_NAME");
                String path = uri.path();
                masterName = path.length() > 1 ? path.substring(1) : "";
                if (masterName.isEmpty() || masterName.contains("/")) {
                    throw r.invalid("master name", "must be the path, the name the sentinels monitor the primary by,"
                            + " as in " + scheme + "://sentinel1:26379,sentinel2:26379/mymaster; the database is the"
                            + " parameter database");
                }
                database = r.integer("database", 0, 0, Integer.MAX_VALUE);
                Optional<String> su = r.text("sentinelUser");
                Optional<String> sp = r.text("sentinelPassword");
                if (su.isPresent() && sp.isEmpty()) {
                    throw r.invalid("sentinelUser", "needs sentinelPassword too");
                }
                sentinelUser = su.orElse(null);
                sentinelPassword = sp.orElse(null);
            }
            case CLUSTER -> {
                hosts = r.hosts(DEFAULT_PORT, MAX_HOSTS, scheme + "://node1:7000,node2:7001,node3:7002");
                r.noPath("a Redis Cluster has only database 0; write " + scheme + "://node1:7000,node2:7001");
            }
            case REDLOCK -> {
                hosts = r.hosts(DEFAULT_PORT, MAX_HOSTS, scheme + "://node1:6379,node2:6379,node3:6379");
                if (hosts.size() < MIN_REDLOCK_NODES) {
                    throw r.invalid("host", "must be at least " + MIN_REDLOCK_NODES + " independent primaries for "
                            + scheme + "://, was " + hosts.size() + "; for one server use " + (tls ? "rediss" : "redis")
                            + "://host:port");
                }
                if (hosts.size() != hosts.stream().distinct().count()) {
                    throw r.invalid("host", "names a node twice: " + hosts);
                }
                database = parseDatabase(r);
            }
            default -> throw new IllegalStateException(mode.toString());
        }
        BackendUri.HostPort first = hosts.get(0);
        Optional<UriReader.Credentials> credentials = r.credentials(true, scheme + "://:PASSWORD@host for a password "
                + "alone, or " + scheme + "://USER:PASSWORD@host");
        String prefix = r.text("prefix", DEFAULT_PREFIX);
        if (mode == Mode.CLUSTER && (prefix.contains("{") || prefix.contains("}"))) {
            throw r.invalid("prefix", "must not contain '{' or '}' in " + scheme + "://: it would become the hash tag"
                    + " of every key and put every lock in one slot");
        }
        int poolSize = r.integer("poolSize", DEFAULT_POOL_SIZE, 1, MAX_POOL_SIZE);
        int waitReplicas = mode == Mode.REDLOCK ? 0 : r.integer("waitReplicas", 0, 0, MAX_WAIT_REPLICAS);
        Duration lockDelay = r.duration("lockDelay", MIN_LOCK_DELAY, MAX_LOCK_DELAY, true).orElseGet(() ->
                defaultLease.compareTo(DEFAULT_LOCK_DELAY) > 0 && defaultLease.compareTo(MAX_LOCK_DELAY) <= 0
                        ? defaultLease : DEFAULT_LOCK_DELAY);
        return new RedisSettings(uri, mode, hosts, masterName, sentinelUser, sentinelPassword, tls, first.host(),
                first.port(), database, credentials.map(UriReader.Credentials::user).orElse(null),
                credentials.map(UriReader.Credentials::password).orElse(null), prefix, poolSize, waitReplicas, lockDelay,
                mode == Mode.STANDALONE);
    }

    /**
     * The same settings aimed at one node: a data node found through the sentinels or the cluster,
     * or one Redlock node. Messages then name that node.
     *
     * @param host the node's host
     * @param port the node's port
     * @return the copy
     */
    RedisSettings forNode(String host, int port) {
        return new RedisSettings(uri, mode, hosts, masterName, sentinelUser, sentinelPassword, tls, host, port,
                database, user, password, prefix, poolSize, waitReplicas, lockDelay, true);
    }

    private static int parseDatabase(UriReader r) {
        String path = r.uri().path();
        if (path.isEmpty() || path.equals("/")) {
            return 0;
        }
        String db = path.substring(1);
        int n = -1;
        if (db.matches("[0-9]{1,9}")) {
            n = Integer.parseInt(db);
        }
        if (n < 0) {
            throw r.invalid("database", "must be a number from 0, as in /0, was '" + path + "'");
        }
        return n;
    }

    /** @return the server's address for messages: {@code host:port}, IPv6 in brackets */
    String address() {
        return UriReader.authority(new BackendUri.HostPort(host, port));
    }

    /** @return how messages name the server, e.g. {@code Redis at 10.0.0.5:6379 (db 2, TLS)} */
    String server() {
        String db = database != 0 ? " (db " + database + (tls ? ", TLS)" : ")") : tls ? " (TLS)" : "";
        if (!oneNode) {
            // the URI's settings, not a node's copy: name the deployment, not its first host
            String all = hosts.stream().map(UriReader::authority).collect(java.util.stream.Collectors.joining(", "));
            switch (mode) {
                case SENTINEL:
                    return "the Redis primary '" + masterName + "' of the sentinels " + all + db;
                case CLUSTER:
                    return "the Redis Cluster of the seeds " + all + db;
                case REDLOCK:
                    return "the Redlock nodes " + all + db;
                default:
                    break;
            }
        }
        return "Redis at " + address() + db;
    }

    /**
     * What a backend of these settings promises: {@code FENCING}, {@code NOTIFY_WAITERS},
     * {@code HOLDER_QUERY}; with the lock-delay on also {@code SURVIVES_EMPTY_RESTART}, and in the
     * modes with more than one server (Sentinel, Cluster, Redlock) {@code SURVIVES_SERVER_FAILOVER}
     * (each passes the TCK's S9; the assumptions are in docs/ARCHITECTURE.md).
     *
     * @return the capabilities
     */
    Set<Capability> capabilities() {
        EnumSet<Capability> c = EnumSet.of(Capability.FENCING, Capability.NOTIFY_WAITERS, Capability.HOLDER_QUERY);
        if (!lockDelay.isZero()) {
            c.add(Capability.SURVIVES_EMPTY_RESTART);
            if (mode != Mode.STANDALONE) {
                c.add(Capability.SURVIVES_SERVER_FAILOVER);
            }
        }
        return Collections.unmodifiableSet(c);
    }

    /**
     * The longest lease: the lock-delay, so that a lease granted before a server lost its data
     * has ended by the time the lock-delay lets anyone in; 365 days when the lock-delay is off.
     *
     * @return the lease bound
     */
    Duration maximumLeaseTime() {
        return lockDelay.isZero() ? UNBOUNDED_LEASE : lockDelay;
    }

    /**
     * Holds the line on {@link #maximumLeaseTime()} for any caller (the core checks it already).
     *
     * @param lease a lease time
     * @throws IllegalArgumentException if it is longer
     */
    void checkLease(Duration lease) {
        if (lease.compareTo(maximumLeaseTime()) > 0) {
            throw new IllegalArgumentException("leaseTime must be at most the lock-delay " + maximumLeaseTime()
                    + " of " + server() + " (the uri parameter lockDelay), was " + lease);
        }
    }

    @Override
    public String toString() {
        return uri.toString();
    }
}
