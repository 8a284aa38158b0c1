package io.dlock.zookeeper.internal;

import io.dlock.spi.BackendUri;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.zookeeper.common.PathUtils;

/**
 * A ZooKeeper URI, checked: {@code zookeeper://[user:password@]host[:port][,host[:port]...][/chroot][?param=value&...]}.
 * Parameters: {@code sessionTimeout} (ISO-8601 such as {@code PT10S}, or milliseconds; default
 * 30 s) and {@code prefix} (the node under which lock names live; default {@code dlock}).
 */
final class ZkConfig {

    static final int DEFAULT_PORT = 2181;
    static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(30);
    static final String DEFAULT_PREFIX = "dlock";
    private static final Set<String> PARAMS = Set.of("sessionTimeout", "prefix");

    final String connectString;
    /** The configured addresses, unresolved, for {@link AddressProbe}. */
    final List<InetSocketAddress> addresses;
    /**
     * Where the per-name parents live: chroot + "/" + prefix. Not a Curator namespace: Curator
     * creates a namespace with a blocking call on the caller's thread, outside our deadlines.
     */
    final String basePath;
    final Duration sessionTimeout;
    final String user; // null without credentials
    final String password;
    final String shown; // redacted URI, for messages

    private ZkConfig(String connectString, List<InetSocketAddress> addresses, String basePath,
                     Duration sessionTimeout, String user, String password, String shown) {
        this.connectString = connectString;
        this.addresses = List.copyOf(addresses);
        this.basePath = basePath;
        this.sessionTimeout = sessionTimeout;
        this.user = user;
        this.password = password;
        this.shown = shown;
    }

    static ZkConfig from(BackendUri uri) {
        String shown = uri.toString();
        if (uri.hosts().isEmpty()) {
            throw new IllegalArgumentException("uri must name at least one ZooKeeper host, was '" + shown + "'");
        }
        List<String> hosts = new ArrayList<>();
        List<InetSocketAddress> addresses = new ArrayList<>();
        for (BackendUri.HostPort hp : uri.hosts()) {
            String host = hp.host().contains(":") ? "[" + hp.host() + "]" : hp.host();
            hosts.add(host + ":" + hp.portOr(DEFAULT_PORT));
            addresses.add(InetSocketAddress.createUnresolved(hp.host(), hp.portOr(DEFAULT_PORT)));
        }
        for (Map.Entry<String, String> e : uri.params().entrySet()) {
            if (!PARAMS.contains(e.getKey())) {
                throw new IllegalArgumentException("uri has an unknown parameter '" + e.getKey()
                        + "' (known: prefix, sessionTimeout): '" + shown + "'");
            }
        }
        String chroot = chroot(uri.path(), shown);
        String prefix = uri.param("prefix").orElse(DEFAULT_PREFIX);
        String prefixPath = "/" + prefix;
        try {
            PathUtils.validatePath(prefixPath);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("uri parameter prefix must be a relative ZooKeeper path such as "
                    + "'dlock' or 'apps/dlock', was '" + prefix + "': " + e.getMessage(), e);
        }
        if (chroot.isEmpty() && reserved(prefixPath)) {
            throw new IllegalArgumentException("uri parameter prefix must not be under /zookeeper, was '" + prefix + "'");
        }
        Duration session = uri.durationParam("sessionTimeout").map(d -> checkSession(d, uri.param("sessionTimeout").orElseThrow(), shown))
                .orElse(DEFAULT_SESSION_TIMEOUT);
        String user = uri.user().orElse(null);
        String password = uri.password().orElse(null);
        if (user != null && password == null) {
            // never echo it: it is as likely a password written without the ':' as a user name
            throw new IllegalArgumentException("uri user info has no ':', so it would be a user name without a "
                    + "password; ZooKeeper digest authentication needs both: write zookeeper://USER:PASSWORD@host: '"
                    + shown + "'");
        }
        if (user == null && password != null) {
            throw new IllegalArgumentException("uri has a password but no user: '" + shown + "'");
        }
        if (user != null && user.contains(":")) {
            throw new IllegalArgumentException("uri user must not contain ':': '" + shown + "'");
        }
        return new ZkConfig(String.join(",", hosts), addresses, chroot + prefixPath, session, user, password, shown);
    }

    boolean hasCredentials() {
        return user != null;
    }

    private static String chroot(String path, String shown) {
        String p = path;
        while (p.length() > 1 && p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        if (p.isEmpty() || p.equals("/")) {
            return "";
        }
        try {
            PathUtils.validatePath(p);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("uri has an invalid chroot '" + p + "': " + e.getMessage()
                    + ": '" + shown + "'", e);
        }
        if (reserved(p)) {
            throw new IllegalArgumentException("uri chroot must not be under /zookeeper, was '" + p + "'");
        }
        return p;
    }

    private static boolean reserved(String path) {
        return path.equals("/zookeeper") || path.startsWith("/zookeeper/");
    }

    private static Duration checkSession(Duration d, String value, String shown) {
        if (d.isZero() || d.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("uri parameter sessionTimeout must be positive and at most "
                    + Integer.MAX_VALUE + " ms, was '" + value + "': '" + shown + "'");
        }
        return d;
    }
}
