package io.dlock.redis.internal;

import io.dlock.LockOptions;
import io.dlock.spi.BackendUri;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A {@code redis://} or {@code rediss://} URI, checked and with its defaults applied. Immutable.
 * Its {@link #toString()} never shows the password.
 */
final class RedisSettings {

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

    private static final Set<String> KNOWN_PARAMS = Set.of("prefix", "poolSize", "waitReplicas", "lockDelay");

    final BackendUri uri;
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

    private RedisSettings(BackendUri uri, boolean tls, String host, int port, int database, String user,
                          String password, String prefix, int poolSize, int waitReplicas, Duration lockDelay) {
        this.uri = uri;
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
        String shown = uri.toString();
        String scheme = uri.scheme();
        if (!scheme.equals("redis") && !scheme.equals("rediss")) {
            throw new IllegalArgumentException("uri scheme must be redis or rediss, was '" + scheme + "': '" + shown + "'");
        }
        List<BackendUri.HostPort> hosts = uri.hosts();
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("uri host is missing: write " + scheme + "://host:port, was '" + shown + "'");
        }
        if (hosts.size() > 1) {
            throw new IllegalArgumentException("uri host: dlock-redis talks to one Redis server, but the uri names "
                    + hosts.size() + " hosts " + hosts + " (Redis Cluster and Sentinel are not supported): '" + shown + "'");
        }
        BackendUri.HostPort hostPort = hosts.get(0);
        int port = hostPort.portOr(DEFAULT_PORT);
        if (port == 0) {
            throw new IllegalArgumentException("uri port must be 1 to 65535, was 0: '" + shown + "'");
        }
        int database = parseDatabase(uri.path(), shown);
        String user = uri.user().orElse(null);
        String password = uri.password().orElse(null);
        if (user != null && password == null) {
            // never echo it: it is as likely a password written without the ':' as a user name
            throw new IllegalArgumentException("uri user info has no ':', so it would be a user name without a "
                    + "password; write " + scheme + "://:PASSWORD@host for a password alone, or " + scheme
                    + "://USER:PASSWORD@host: '" + shown + "'");
        }
        if (password != null && password.isEmpty()) {
            throw new IllegalArgumentException("uri password is empty: leave out the user info or give the password: '"
                    + shown + "'");
        }
        for (String param : uri.params().keySet()) {
            if (!KNOWN_PARAMS.contains(param)) {
                throw new IllegalArgumentException("uri parameter '" + param + "' is unknown to dlock-redis (known: "
                        + String.join(", ", new java.util.TreeSet<>(KNOWN_PARAMS)) + "): '" + shown + "'");
            }
        }
        Map<String, String> params = uri.params();
        String prefix = params.getOrDefault("prefix", DEFAULT_PREFIX);
        if (prefix.isEmpty()) {
            throw new IllegalArgumentException("uri parameter prefix must not be empty (default '" + DEFAULT_PREFIX
                    + "'): '" + shown + "'");
        }
        int poolSize = intParam(params, "poolSize", DEFAULT_POOL_SIZE, 1, MAX_POOL_SIZE, shown);
        int waitReplicas = intParam(params, "waitReplicas", 0, 0, MAX_WAIT_REPLICAS, shown);
        Duration lockDelay = uri.durationParam("lockDelay").orElse(null);
        if (lockDelay == null) {
            lockDelay = defaultLease.compareTo(DEFAULT_LOCK_DELAY) > 0 && defaultLease.compareTo(MAX_LOCK_DELAY) <= 0
                    ? defaultLease : DEFAULT_LOCK_DELAY;
        } else if (!lockDelay.isZero() && (lockDelay.compareTo(MIN_LOCK_DELAY) < 0 || lockDelay.compareTo(MAX_LOCK_DELAY) > 0)) {
            throw new IllegalArgumentException("uri parameter lockDelay must be 0 (no lock-delay) or from "
                    + MIN_LOCK_DELAY + " to " + MAX_LOCK_DELAY + ", was '" + params.get("lockDelay") + "': '" + shown + "'");
        }
        return new RedisSettings(uri, scheme.equals("rediss"), hostPort.host(), port, database, user, password,
                prefix, poolSize, waitReplicas, lockDelay);
    }

    private static int intParam(Map<String, String> params, String name, int defaultValue, int min, int max,
                                String shown) {
        String raw = params.get(name);
        if (raw == null) {
            return defaultValue;
        }
        int n = -1;
        if (raw.trim().matches("[0-9]{1,9}")) {
            n = Integer.parseInt(raw.trim());
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException("uri parameter " + name + " must be a number from " + min + " to " + max
                    + ", was '" + raw + "': '" + shown + "'");
        }
        return n;
    }

    private static int parseDatabase(String path, String shown) {
        if (path.isEmpty() || path.equals("/")) {
            return 0;
        }
        String db = path.substring(1);
        int n = -1;
        if (db.matches("[0-9]{1,9}")) {
            n = Integer.parseInt(db);
        }
        if (n < 0) {
            throw new IllegalArgumentException("uri database must be a number from 0, as in /0, was '" + path
                    + "': '" + shown + "'");
        }
        return n;
    }

    /** @return the server's address for messages: {@code host:port}, IPv6 in brackets */
    String address() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    /** @return how messages name the server, e.g. {@code Redis at 10.0.0.5:6379 (db 2, TLS)} */
    String server() {
        String extra = database != 0 && tls ? " (db " + database + ", TLS)"
                : database != 0 ? " (db " + database + ")" : tls ? " (TLS)" : "";
        return "Redis at " + address() + extra;
    }

    @Override
    public String toString() {
        return uri.toString();
    }
}
