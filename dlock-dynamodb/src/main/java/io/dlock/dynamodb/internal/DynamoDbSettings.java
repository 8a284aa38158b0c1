package io.dlock.dynamodb.internal;

import io.dlock.spi.BackendUri;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A {@code dynamodb://TABLE?...} URI, checked and with its defaults applied. Immutable. Its
 * {@link #toString()} never shows credentials.
 */
final class DynamoDbSettings {

    /** How renewals of many leases travel. */
    enum Renewal {
        /** One conditional UpdateItem per lease, several in parallel. */
        UPDATE,
        /** TransactWriteItems of up to 100 conditional updates, single updates where one is cancelled. */
        TRANSACTION,
        /**
         * The default: single updates for a renewal of fewer than {@link #AUTO_TRANSACTION_FROM}
         * leases, transactions from there on, so that the request rate stays bounded however many
         * locks a client holds.
         */
        AUTO;

        /** From how many leases in one renewal call {@link #AUTO} renews by transaction. */
        static final int AUTO_TRANSACTION_FROM = 100;

        boolean byTransaction(int leases) {
            return this == TRANSACTION || (this == AUTO && leases >= AUTO_TRANSACTION_FROM);
        }
    }

    private static final Set<String> KNOWN_PARAMS = Set.of("region", "endpoint", "createTable", "accessKeyId",
            "secretAccessKey", "sessionToken", "profile", "renewal");

    final BackendUri uri;
    final String table;
    /** The region, or null to take it from the SDK's default region chain. */
    final String region;
    /** The endpoint override, or null for the region's standard endpoint. */
    final URI endpoint;
    final boolean createTable;
    final String accessKeyId;
    final String secretAccessKey;
    final String sessionToken;
    final String profile;
    final Renewal renewal;

    private DynamoDbSettings(BackendUri uri, String table, String region, URI endpoint, boolean createTable,
                             String accessKeyId, String secretAccessKey, String sessionToken, String profile,
                             Renewal renewal) {
        this.uri = uri;
        this.table = table;
        this.region = region;
        this.endpoint = endpoint;
        this.createTable = createTable;
        this.accessKeyId = accessKeyId;
        this.secretAccessKey = secretAccessKey;
        this.sessionToken = sessionToken;
        this.profile = profile;
        this.renewal = renewal;
    }

    /**
     * Checks a parsed URI.
     *
     * @param uri the parsed URI
     * @return the settings
     * @throws IllegalArgumentException naming the part that is wrong, with the URI redacted
     */
    static DynamoDbSettings from(BackendUri uri) {
        String shown = uri.toString();
        if (!uri.scheme().equals("dynamodb")) {
            throw new IllegalArgumentException("uri scheme must be dynamodb, was '" + uri.scheme() + "': '" + shown + "'");
        }
        if (uri.user().isPresent() || uri.password().isPresent()) {
            throw new IllegalArgumentException("uri user info is not used by dlock-dynamodb: give credentials as the "
                    + "accessKeyId and secretAccessKey parameters, or leave them to the SDK's default chain (an '@' "
                    + "anywhere in the uri, even in a parameter such as endpoint, starts user info; write it %40 in "
                    + "a parameter): '" + shown + "'");
        }
        if (uri.hosts().size() != 1 || uri.hosts().get(0).port() >= 0 || !(uri.path().isEmpty() || uri.path().equals("/"))) {
            throw new IllegalArgumentException("uri table: write dynamodb://TABLE?region=REGION (the table name where "
                    + "a host would be, no port and no path), was '" + shown + "'");
        }
        String table = uri.hosts().get(0).host();
        if (!table.matches("[A-Za-z0-9_.-]{3,255}")) {
            throw new IllegalArgumentException("uri table name must be 3 to 255 letters, digits, '_', '-' or '.', was '"
                    + table + "': '" + shown + "'");
        }
        for (String param : uri.params().keySet()) {
            if (!KNOWN_PARAMS.contains(param)) {
                throw new IllegalArgumentException("uri parameter '" + param + "' is unknown to dlock-dynamodb (known: "
                        + String.join(", ", new TreeSet<>(KNOWN_PARAMS)) + "): '" + shown + "'");
            }
        }
        Map<String, String> params = uri.params();
        String region = params.get("region");
        if (region != null && !region.matches("[a-z0-9][a-z0-9-]{0,63}")) {
            throw new IllegalArgumentException("uri parameter region must look like us-east-1, was '" + region
                    + "': '" + shown + "'");
        }
        URI endpoint = null;
        String rawEndpoint = params.get("endpoint");
        if (rawEndpoint != null) {
            endpoint = parseEndpoint(rawEndpoint, shown);
        }
        boolean createTable = booleanParam(params, "createTable", shown);
        String accessKeyId = nonEmpty(params, "accessKeyId", shown);
        String secretAccessKey = nonEmpty(params, "secretAccessKey", shown);
        String sessionToken = nonEmpty(params, "sessionToken", shown);
        String profile = nonEmpty(params, "profile", shown);
        if ((accessKeyId == null) != (secretAccessKey == null)) {
            throw new IllegalArgumentException("uri parameters accessKeyId and secretAccessKey go together: give both "
                    + "or neither (then the SDK's default credential chain is used): '" + shown + "'");
        }
        if (sessionToken != null && accessKeyId == null) {
            throw new IllegalArgumentException("uri parameter sessionToken needs accessKeyId and secretAccessKey: '"
                    + shown + "'");
        }
        if (profile != null && accessKeyId != null) {
            throw new IllegalArgumentException("uri parameters profile and accessKeyId exclude each other: choose one "
                    + "source of credentials: '" + shown + "'");
        }
        Renewal renewal = Renewal.AUTO;
        String rawRenewal = params.get("renewal");
        if (rawRenewal != null) {
            try {
                renewal = Renewal.valueOf(rawRenewal.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("uri parameter renewal must be auto, update or transaction, was '"
                        + rawRenewal + "': '" + shown + "'", e);
            }
        }
        return new DynamoDbSettings(uri, table, region, endpoint, createTable, accessKeyId, secretAccessKey,
                sessionToken, profile, renewal);
    }

    private static URI parseEndpoint(String raw, String shown) {
        if (raw.indexOf('@') >= 0) {
            // never echo it: the part before '@' may be a password
            throw new IllegalArgumentException("uri parameter endpoint must not contain user info ('@'): give "
                    + "credentials as accessKeyId and secretAccessKey: '" + shown + "'");
        }
        URI endpoint;
        try {
            endpoint = new URI(raw.trim());
        } catch (URISyntaxException e) {
            endpoint = null;
        }
        if (endpoint == null || endpoint.getScheme() == null || endpoint.getHost() == null
                || !(endpoint.getScheme().equalsIgnoreCase("http") || endpoint.getScheme().equalsIgnoreCase("https"))
                || endpoint.getQuery() != null || endpoint.getFragment() != null) {
            throw new IllegalArgumentException("uri parameter endpoint must be an http or https URL such as "
                    + "http://127.0.0.1:8000, was '" + raw + "': '" + shown + "'");
        }
        return endpoint;
    }

    private static boolean booleanParam(Map<String, String> params, String name, String shown) {
        String raw = params.get(name);
        if (raw == null) {
            return false;
        }
        String v = raw.trim().toLowerCase(Locale.ROOT);
        if (v.equals("true") || v.isEmpty()) {
            return true;
        }
        if (v.equals("false")) {
            return false;
        }
        throw new IllegalArgumentException("uri parameter " + name + " must be true or false, was '" + raw + "': '"
                + shown + "'");
    }

    /** A parameter that, when present, must not be empty; its value is never shown. */
    private static String nonEmpty(Map<String, String> params, String name, String shown) {
        String v = params.get(name);
        if (v == null) {
            return null;
        }
        if (v.isEmpty()) {
            throw new IllegalArgumentException("uri parameter " + name + " is empty: '" + shown + "'");
        }
        return v;
    }

    /** @return where requests go, for messages: the endpoint, or the region's standard one */
    String server() {
        return endpoint != null ? endpoint.toString() : "the DynamoDB endpoint of " + (region == null ? "the default region" : region);
    }

    /** @return the table, region and endpoint; never credentials */
    @Override
    public String toString() {
        return "table '" + table + "'" + (region == null ? "" : " in " + region)
                + (endpoint == null ? "" : " at " + endpoint) + (createTable ? " (createTable)" : "");
    }
}
