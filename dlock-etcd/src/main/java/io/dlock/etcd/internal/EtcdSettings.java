package io.dlock.etcd.internal;

import io.dlock.spi.BackendUri;
import io.dlock.spi.support.UriReader;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;

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
        UriReader r = UriReader.of(uri, "dlock-etcd", KNOWN_PARAMS);
        String scheme = r.scheme("etcd", "etcds");
        boolean tls = scheme.equals("etcds");
        List<BackendUri.HostPort> hosts = r.hosts(DEFAULT_PORT, Integer.MAX_VALUE, scheme + "://host:port[,host:port...]");
        r.noPath("set a key prefix with ?prefix=...");
        Optional<UriReader.Credentials> credentials = r.credentials(false, scheme + "://USER:PASSWORD@host:port");
        String prefix = r.text("prefix", DEFAULT_PREFIX);
        Path caFile = file(r, "caFile", tls);
        Path certFile = file(r, "certFile", tls);
        Path keyFile = file(r, "keyFile", tls);
        if ((certFile == null) != (keyFile == null)) {
            throw r.invalid("parameters certFile and keyFile", "go together (a client certificate and its PKCS#8 key), "
                    + "but only " + (certFile == null ? "keyFile" : "certFile") + " is given");
        }
        return new EtcdSettings(uri, tls, hosts, credentials.map(UriReader.Credentials::user).orElse(null),
                credentials.map(UriReader.Credentials::password).orElse(null), prefix, caFile, certFile, keyFile);
    }

    private static Path file(UriReader r, String name, boolean tls) {
        if (!tls && r.uri().param(name).isPresent()) {
            throw r.invalid("parameter " + name, "is for TLS: use the etcds:// scheme");
        }
        return r.readableFile(name).orElse(null);
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
            b.append(i > 0 ? "," : "").append(UriReader.authority(hosts.get(i)));
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
