package io.dlock.dynamodb.internal;

import io.dlock.spi.BackendUri;
import io.dlock.spi.support.UriReader;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Set;

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
        UriReader r = UriReader.of(uri, "dlock-dynamodb", KNOWN_PARAMS);
        r.scheme("dynamodb");
        if (uri.user().isPresent() || uri.password().isPresent()) {
            throw r.invalid("user info", "is not used by dlock-dynamodb: give credentials as the accessKeyId and "
                    + "secretAccessKey parameters, or leave them to the SDK's default chain (an '@' anywhere in the uri, "
                    + "even in a parameter such as endpoint, starts user info; write it %40 in a parameter)");
        }
        if (uri.hosts().size() != 1 || uri.hosts().get(0).port() >= 0 || !(uri.path().isEmpty() || uri.path().equals("/"))) {
            throw r.invalid("table", "must be written dynamodb://TABLE?region=REGION (the table name where a host would "
                    + "be, no port and no path)");
        }
        String table = uri.hosts().get(0).host();
        if (!table.matches("[A-Za-z0-9_.-]{3,255}")) {
            throw r.invalid("table name", "must be 3 to 255 letters, digits, '_', '-' or '.', was '" + table + "'");
        }
        String region = r.text("region").orElse(null);
        if (region != null && !region.matches("[a-z0-9][a-z0-9-]{0,63}")) {
            throw r.invalid("parameter region", "must look like us-east-1, was '" + region + "'");
        }
        URI endpoint = r.text("endpoint").map(raw -> parseEndpoint(r, raw)).orElse(null);
        boolean createTable = r.flag("createTable", false);
        String accessKeyId = r.text("accessKeyId").orElse(null);
        String secretAccessKey = r.text("secretAccessKey").orElse(null);
        String sessionToken = r.text("sessionToken").orElse(null);
        String profile = r.text("profile").orElse(null);
        if ((accessKeyId == null) != (secretAccessKey == null)) {
            throw r.invalid("parameters accessKeyId and secretAccessKey", "go together: give both or neither (then the "
                    + "SDK's default credential chain is used)");
        }
        if (sessionToken != null && accessKeyId == null) {
            throw r.invalid("parameter sessionToken", "needs accessKeyId and secretAccessKey");
        }
        if (profile != null && accessKeyId != null) {
            throw r.invalid("parameters profile and accessKeyId", "exclude each other: choose one source of credentials");
        }
        Renewal renewal = r.choice("renewal", Renewal.AUTO);
        return new DynamoDbSettings(uri, table, region, endpoint, createTable, accessKeyId, secretAccessKey,
                sessionToken, profile, renewal);
    }

    private static URI parseEndpoint(UriReader r, String raw) {
        if (raw.indexOf('@') >= 0) {
            // never echo it: the part before '@' may be a password
            throw r.invalid("parameter endpoint", "must not contain user info ('@'): give credentials as accessKeyId "
                    + "and secretAccessKey");
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
            throw r.invalid("parameter endpoint", "must be an http or https URL such as http://127.0.0.1:8000, was '"
                    + raw + "'");
        }
        return endpoint;
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
