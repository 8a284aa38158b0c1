package io.dlock.etcd.internal;

import io.dlock.spi.BackendUri;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * An {@code etcd://} or {@code etcds://} URI, checked and with its defaults applied. Immutable.
 * Its {@link #toString()} never shows the password.
 */
final class EtcdSettings {

    static final int DEFAULT_PORT = 2379;
    static final String DEFAULT_PREFIX = "dlock/";

    private static final Set<String> KNOWN_PARAMS = Set.of("prefix", "caFile", "certFile", "keyFile");

    final BackendUri uri;
    final boolean tls;
    final List<BackendUri.HostPort> hosts;
    final String user;
    final String password;
    final String prefix;
    final Path caFile;
    final Path certFile;
    final Path keyFile;

    private EtcdSettings(BackendUri uri, boolean tls, List<BackendUri.HostPort> hosts, String user, String password,
                         String prefix, Path caFile, Path certFile, Path keyFile) {
        this.uri = uri;
        this.tls = tls;
        this.hosts = hosts;
        this.user = user;
        this.password = password;
        this.prefix = prefix;
        this.caFile = caFile;
        this.certFile = certFile;
        this.keyFile = keyFile;
    }

    /**
     * Checks a parsed URI.
     *
     * @throws IllegalArgumentException naming the part that is wrong, with the URI redacted
     */
    static EtcdSettings from(BackendUri uri) {
        String shown = uri.toString();
        String scheme = uri.scheme();
        if (!scheme.equals("etcd") && !scheme.equals("etcds")) {
            throw new IllegalArgumentException("uri scheme must be etcd or etcds, was '" + scheme + "': '" + shown + "'");
        }
        boolean tls = scheme.equals("etcds");
        if (uri.hosts().isEmpty()) {
            throw new IllegalArgumentException("uri host is missing: write " + scheme
                    + "://host:port[,host:port...], was '" + shown + "'");
        }
        if (!uri.path().isEmpty() && !uri.path().equals("/")) {
            throw new IllegalArgumentException("uri path '" + uri.path() + "' is not understood by dlock-etcd "
                    + "(set a key prefix with ?prefix=...): '" + shown + "'");
        }
        List<BackendUri.HostPort> hosts = new ArrayList<>();
        for (BackendUri.HostPort hp : uri.hosts()) {
            int port = hp.portOr(DEFAULT_PORT);
            if (port == 0) {
                throw new IllegalArgumentException("uri port must be 1 to 65535, was 0: '" + shown + "'");
            }
            hosts.add(new BackendUri.HostPort(hp.host(), port));
        }
        String user = uri.user().orElse(null);
        String password = uri.password().orElse(null);
        if (user != null && password == null) {
            // never echo it: it is as likely a password written without the ':' as a user name
            throw new IllegalArgumentException("uri user info has no ':', so it would be a user name without a "
                    + "password; etcd authentication needs both: write " + scheme + "://USER:PASSWORD@host:port: '"
                    + shown + "'");
        }
        if (user == null && password != null) {
            throw new IllegalArgumentException("uri user is missing: etcd authentication needs a user name "
                    + "with the password: '" + shown + "'");
        }
        if (password != null && password.isEmpty()) {
            throw new IllegalArgumentException("uri password is empty: leave out the user info or give the password: '"
                    + shown + "'");
        }
        for (String param : uri.params().keySet()) {
            if (!KNOWN_PARAMS.contains(param)) {
                throw new IllegalArgumentException("uri parameter '" + param + "' is unknown to dlock-etcd (known: "
                        + String.join(", ", new TreeSet<>(KNOWN_PARAMS)) + "): '" + shown + "'");
            }
        }
        Map<String, String> params = uri.params();
        String prefix = params.getOrDefault("prefix", DEFAULT_PREFIX);
        if (prefix.isEmpty()) {
            throw new IllegalArgumentException("uri parameter prefix must not be empty (default '" + DEFAULT_PREFIX
                    + "'): '" + shown + "'");
        }
        Path caFile = file(params, "caFile", tls, shown);
        Path certFile = file(params, "certFile", tls, shown);
        Path keyFile = file(params, "keyFile", tls, shown);
        if ((certFile == null) != (keyFile == null)) {
            throw new IllegalArgumentException("uri parameters certFile and keyFile go together (a client certificate "
                    + "and its PKCS#8 key), but only " + (certFile == null ? "keyFile" : "certFile") + " is given: '"
                    + shown + "'");
        }
        return new EtcdSettings(uri, tls, Collections.unmodifiableList(hosts), user, password, prefix, caFile,
                certFile, keyFile);
    }

    private static Path file(Map<String, String> params, String name, boolean tls, String shown) {
        String value = params.get(name);
        if (value == null) {
            return null;
        }
        if (!tls) {
            throw new IllegalArgumentException("uri parameter " + name + " is for TLS: use the etcds:// scheme: '"
                    + shown + "'");
        }
        Path p;
        try {
            p = Path.of(value);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("uri parameter " + name + " is not a valid path: '" + shown + "'");
        }
        if (!Files.isReadable(p)) {
            throw new IllegalArgumentException("uri parameter " + name + " names a file that cannot be read ("
                    + value + "): '" + shown + "'");
        }
        return p;
    }

    /**
     * Returns the gRPC target for jetcd's {@code ip} name resolver: {@code ip:///h1:p1,h2:p2}. An
     * IPv6 address is written {@code %5B::1%5D:p}: the resolver reads the decoded path, and a
     * literal bracket is not allowed in a URI path.
     *
     * @return the target
     */
    String target() {
        StringBuilder b = new StringBuilder("ip:///");
        for (int i = 0; i < hosts.size(); i++) {
            BackendUri.HostPort hp = hosts.get(i);
            if (i > 0) {
                b.append(',');
            }
            b.append(hp.host().indexOf(':') >= 0 ? "%5B" + hp.host() + "%5D" : hp.host()).append(':').append(hp.port());
        }
        return b.toString();
    }

    /** @return how messages name the cluster, e.g. {@code etcd at 10.0.0.5:2379,10.0.0.6:2379 (TLS)} */
    String server() {
        StringBuilder b = new StringBuilder("etcd at ");
        for (int i = 0; i < hosts.size(); i++) {
            if (i > 0) {
                b.append(',');
            }
            BackendUri.HostPort hp = hosts.get(i);
            b.append(hp.host().indexOf(':') >= 0 ? "[" + hp.host() + "]" : hp.host()).append(':').append(hp.port());
        }
        if (tls) {
            b.append(" (TLS)");
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return uri.toString();
    }
}
