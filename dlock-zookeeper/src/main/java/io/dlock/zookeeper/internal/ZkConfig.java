package io.dlock.zookeeper.internal;

import io.dlock.spi.BackendUri;
import io.dlock.spi.support.UriReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
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
    /** The configured addresses, each with its port, for {@link io.dlock.spi.support.AddressProbe}. */
    final List<BackendUri.HostPort> addresses;
    /**
     * Where the per-name parents live: chroot + "/" + prefix. Not a Curator namespace: Curator
     * creates a namespace with a blocking call on the caller's thread, outside our deadlines.
     */
    final String basePath;
    final Duration sessionTimeout;
    final String user; // null without credentials
    final String password;
    final String shown; // redacted URI, for messages

    private ZkConfig(String connectString, List<BackendUri.HostPort> addresses, String basePath,
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
        UriReader r = UriReader.of(uri, "dlock-zookeeper", PARAMS);
        String scheme = r.scheme("zookeeper", "zk");
        List<String> hosts = new ArrayList<>();
        List<BackendUri.HostPort> addresses = r.hosts(DEFAULT_PORT, Integer.MAX_VALUE,
                scheme + "://host:port[,host:port...]");
        for (BackendUri.HostPort hp : addresses) {
            hosts.add(UriReader.authority(hp));
        }
        String chroot = chroot(r);
        String prefix = r.text("prefix", DEFAULT_PREFIX);
        String prefixPath = "/" + prefix;
        try {
            PathUtils.validatePath(prefixPath);
        } catch (IllegalArgumentException e) {
            throw r.invalid("parameter prefix", "must be a relative ZooKeeper path such as 'dlock' or 'apps/dlock', was '"
                    + prefix + "' (" + e.getMessage() + ")");
        }
        if (chroot.isEmpty() && reserved(prefixPath)) {
            throw r.invalid("parameter prefix", "must not be under /zookeeper, was '" + prefix + "'");
        }
        Duration session = r.duration("sessionTimeout", Duration.ofMillis(1), Duration.ofMillis(Integer.MAX_VALUE), false)
                .orElse(DEFAULT_SESSION_TIMEOUT);
        Optional<UriReader.Credentials> credentials = r.credentials(false, scheme
                + "://USER:PASSWORD@host (ZooKeeper digest authentication needs both)");
        if (credentials.isPresent() && credentials.get().user().contains(":")) {
            throw r.invalid("user", "must not contain ':'");
        }
        return new ZkConfig(String.join(",", hosts), addresses, chroot + prefixPath, session,
                credentials.map(UriReader.Credentials::user).orElse(null),
                credentials.map(UriReader.Credentials::password).orElse(null), uri.toString());
    }

    boolean hasCredentials() {
        return user != null;
    }

    private static String chroot(UriReader r) {
        String p = r.uri().path();
        while (p.length() > 1 && p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        if (p.isEmpty() || p.equals("/")) {
            return "";
        }
        try {
            PathUtils.validatePath(p);
        } catch (IllegalArgumentException e) {
            throw r.invalid("chroot '" + p + "'", "is not a valid ZooKeeper path (" + e.getMessage() + ")");
        }
        if (reserved(p)) {
            throw r.invalid("chroot", "must not be under /zookeeper, was '" + p + "'");
        }
        return p;
    }

    private static boolean reserved(String path) {
        return path.equals("/zookeeper") || path.startsWith("/zookeeper/");
    }
}
