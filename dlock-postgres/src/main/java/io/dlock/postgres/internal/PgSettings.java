package io.dlock.postgres.internal;

import io.dlock.spi.BackendUri;
import io.dlock.spi.support.UriReader;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What a {@code postgresql://} URI says, checked: the server, database and credentials (absent
 * when the connections come from the application's {@code DataSource}), the schema of dlock's
 * table, the TLS mode and the number of connections for operations. Immutable.
 */
final class PgSettings {

    static final int DEFAULT_PORT = 5432;
    static final String DEFAULT_SCHEMA = "public";
    static final int DEFAULT_POOL_SIZE = 4;
    static final int MAX_POOL_SIZE = 64;

    /** An unquoted PostgreSQL identifier in lower case: nothing to quote, nothing to escape. */
    private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

    /** The TLS modes of the PostgreSQL JDBC driver (and libpq). */
    static final Set<String> SSL_MODES = Set.of("disable", "allow", "prefer", "require", "verify-ca", "verify-full");

    private static final Set<String> PARAMS = Set.of("schema", "sslmode", "sslrootcert", "poolSize");
    private static final Set<String> DATA_SOURCE_PARAMS = Set.of("schema", "poolSize");

    final BackendUri uri;
    /** The server, or null when a DataSource gives the connections. */
    final String host;
    final int port;
    /** The database, or null with a DataSource. */
    final String database;
    /** The user, or null (the JVM's user name is used, as libpq uses the OS user). */
    final String user;
    /** The password, or null. Never shown. */
    final String password;
    final String schema;
    /** The TLS mode, or null with a DataSource. */
    final String sslMode;
    /** A CA certificate file to trust, or null. */
    final Path sslRootCert;
    final int poolSize;

    private PgSettings(BackendUri uri, String host, int port, String database, String user, String password,
                       String schema, String sslMode, Path sslRootCert, int poolSize) {
        this.uri = uri;
        this.host = host;
        this.port = port;
        this.database = database;
        this.user = user;
        this.password = password;
        this.schema = schema;
        this.sslMode = sslMode;
        this.sslRootCert = sslRootCert;
        this.poolSize = poolSize;
    }

    /**
     * Reads a URI of the driver's own connections:
     * {@code postgresql://[user:password@]host[:port]/database[?schema=&sslmode=&sslrootcert=&poolSize=]}.
     *
     * @param uri the parsed URI
     * @return the settings
     * @throws IllegalArgumentException naming the part that is wrong, never showing the password
     */
    static PgSettings fromUri(BackendUri uri) {
        UriReader r = UriReader.of(uri, "dlock-postgres", PARAMS);
        r.scheme("postgresql", "postgres");
        BackendUri.HostPort hp = r.hosts(DEFAULT_PORT, 1, "postgresql://host:port/database").get(0);
        Optional<UriReader.Credentials> credentials = r.credentials(false,
                "postgresql://USER:PASSWORD@host:port/database");
        String path = uri.path();
        String database = path.startsWith("/") ? path.substring(1) : path;
        if (database.isEmpty()) {
            throw r.invalid("database", "is missing: write postgresql://host:port/DATABASE");
        }
        if (database.contains("/")) {
            throw r.invalid("path", "must be one database name after the host, as in postgresql://host:port/DATABASE");
        }
        String sslMode = r.text("sslmode", "prefer").toLowerCase(Locale.ROOT);
        if (!SSL_MODES.contains(sslMode)) {
            throw r.invalid("parameter sslmode", "must be one of disable, allow, prefer, require, verify-ca, "
                    + "verify-full, was '" + sslMode + "'");
        }
        Path rootCert = r.readableFile("sslrootcert").orElse(null);
        return new PgSettings(uri, hp.host(), hp.port(), database, credentials.map(UriReader.Credentials::user)
                .orElse(null), credentials.map(UriReader.Credentials::password).orElse(null), schema(r), sslMode,
                rootCert, r.integer("poolSize", DEFAULT_POOL_SIZE, 1, MAX_POOL_SIZE));
    }

    /**
     * Reads the URI of a client whose connections come from a {@code DataSource}: only the scheme
     * and the parameters {@code schema} and {@code poolSize}, as in {@code postgresql://?schema=locks}.
     *
     * @param uri the parsed URI
     * @return the settings
     * @throws IllegalArgumentException if the URI names a server, database, credentials or TLS settings
     */
    static PgSettings forDataSource(BackendUri uri) {
        UriReader r = UriReader.of(uri, "dlock-postgres with a DataSource", DATA_SOURCE_PARAMS);
        r.scheme("postgresql", "postgres");
        if (!uri.hosts().isEmpty() || uri.user().isPresent() || uri.password().isPresent()) {
            throw r.invalid("authority", "must be empty when the connections come from a DataSource (it names the "
                    + "server and credentials): write postgresql://?schema=SCHEMA");
        }
        r.noPath("the DataSource names the database; write postgresql://?schema=SCHEMA");
        return new PgSettings(uri, null, -1, null, null, null, schema(r), null, null,
                r.integer("poolSize", DEFAULT_POOL_SIZE, 1, MAX_POOL_SIZE));
    }

    private static String schema(UriReader r) {
        String schema = r.text("schema", DEFAULT_SCHEMA);
        if (!IDENTIFIER.matcher(schema).matches()) {
            throw r.invalid("parameter schema", "must be a lower-case PostgreSQL identifier (a letter or '_', then "
                    + "letters, digits or '_', at most 63), was '" + schema + "'");
        }
        return schema;
    }

    /** @return whether the client refuses a connection without TLS */
    boolean tlsRequired() {
        return sslMode != null && (sslMode.equals("require") || sslMode.startsWith("verify"));
    }

    /** @return where the connections go, for messages: {@code host:port/database}, or the DataSource */
    String server() {
        return host == null ? "the application's DataSource" : UriReader.authority(new BackendUri.HostPort(host, port))
                + "/" + database;
    }

    @Override
    public String toString() {
        return "PgSettings{" + uri + ", schema " + schema + ", poolSize " + poolSize + "}";
    }
}
