package io.dlock.redis.internal;

import io.dlock.LockOptions;
import io.dlock.spi.BackendUri;
import io.dlock.spi.support.UriReader;
import java.time.Duration;
import java.util.Optional;
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
        UriReader r = UriReader.of(uri, "dlock-redis", KNOWN_PARAMS);
        String scheme = r.scheme("redis", "rediss");
        if (uri.hosts().size() > 1) {
            throw r.invalid("host", "must be one host: dlock-redis talks to one Redis server, but the uri names "
                    + uri.hosts().size() + " hosts " + uri.hosts() + " (Redis Cluster and Sentinel are not supported)");
        }
        BackendUri.HostPort hostPort = r.hosts(DEFAULT_PORT, 1, scheme + "://host:port").get(0);
        int database = parseDatabase(r);
        Optional<UriReader.Credentials> credentials = r.credentials(true, scheme + "://:PASSWORD@host for a password "
                + "alone, or " + scheme + "://USER:PASSWORD@host");
        String prefix = r.text("prefix", DEFAULT_PREFIX);
        int poolSize = r.integer("poolSize", DEFAULT_POOL_SIZE, 1, MAX_POOL_SIZE);
        int waitReplicas = r.integer("waitReplicas", 0, 0, MAX_WAIT_REPLICAS);
        Duration lockDelay = r.duration("lockDelay", MIN_LOCK_DELAY, MAX_LOCK_DELAY, true).orElseGet(() ->
                defaultLease.compareTo(DEFAULT_LOCK_DELAY) > 0 && defaultLease.compareTo(MAX_LOCK_DELAY) <= 0
                        ? defaultLease : DEFAULT_LOCK_DELAY);
        return new RedisSettings(uri, scheme.equals("rediss"), hostPort.host(), hostPort.port(), database,
                credentials.map(UriReader.Credentials::user).orElse(null),
                credentials.map(UriReader.Credentials::password).orElse(null), prefix, poolSize, waitReplicas, lockDelay);
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
        String extra = database != 0 && tls ? " (db " + database + ", TLS)"
                : database != 0 ? " (db " + database + ")" : tls ? " (TLS)" : "";
        return "Redis at " + address() + extra;
    }

    @Override
    public String toString() {
        return uri.toString();
    }
}
