package io.dlock.spi;

import io.dlock.spi.support.Arguments;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A parsed backend URI: {@code scheme://[user[:password]@]host[:port][,host[:port]...][/path][?k=v&...]}.
 * Handles the multi-host authorities that {@link java.net.URI} does not, percent-decodes the user,
 * password and query values, and redacts secrets for messages. Immutable and thread-safe.
 *
 * <p>The user info runs to the <em>last</em> {@code @} of the URI, so that a password with an
 * unencoded {@code /} or {@code ?} (common in generated passwords) is still read as a password and
 * never becomes a host, path or parameter that a message could show. An {@code @} after the user
 * info must therefore be percent-encoded ({@code %40} in a parameter value). No message, log line
 * or {@code toString} shows any part of the user info: user and password are both redacted, since
 * a password written in the user slot ({@code redis://PASSWORD@host}) is still a password.
 */
public final class BackendUri {

    /** A host and port; the port is -1 when the URI gave none. */
    public record HostPort(String host, int port) {

        /**
         * @throws IllegalArgumentException if {@code host} is {@code null}
         */
        public HostPort {
            Arguments.notNull("host", host);
        }

        /**
         * Returns the port, or a default when the URI gave none.
         *
         * @param defaultPort the backend's default port
         * @return the port
         */
        public int portOr(int defaultPort) {
            return port < 0 ? defaultPort : port;
        }

        @Override
        public String toString() {
            return port < 0 ? host : host + ":" + port;
        }
    }

    /** A query parameter whose name contains one of these (case-insensitive) is a secret. */
    private static final String[] SECRET_PARAMS = {"password", "secret", "token", "key", "pass", "pwd", "auth",
        "credential"};
    /**
     * {@link #scrub} leaves strings shorter than this alone: they occur by chance in any text, so
     * replacing them would garble messages and protect nothing.
     */
    private static final int SCRUB_MIN_LENGTH = 3;

    private final String scheme;
    private final String user;
    private final String password;
    private final List<HostPort> hosts;
    private final String path;
    private final Map<String, String> params;
    private final String redacted;

    private BackendUri(String scheme, String user, String password, List<HostPort> hosts, String path,
                       Map<String, String> params, String redacted) {
        this.scheme = scheme;
        this.user = user;
        this.password = password;
        this.hosts = hosts;
        this.path = path;
        this.params = params;
        this.redacted = redacted;
    }

    /**
     * Parses a URI.
     *
     * @param uri the URI
     * @return the parsed form
     * @throws IllegalArgumentException if it is null or malformed; the message shows the URI
     *     with its password redacted
     */
    public static BackendUri parse(String uri) {
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException("uri must not be null or blank");
        }
        String s = uri.trim();
        String shown = redact(s);
        int sep = s.indexOf("://");
        if (sep <= 0) {
            throw new IllegalArgumentException("uri must look like scheme://host:port, was '" + shown + "'");
        }
        String scheme = s.substring(0, sep).toLowerCase(Locale.ROOT);
        if (!scheme.matches("[a-z][a-z0-9+.-]*")) {
            throw new IllegalArgumentException("uri has an invalid scheme '" + scheme + "': '" + shown + "'");
        }
        String rest = s.substring(sep + 3);
        String user = null;
        String password = null;
        int at = rest.lastIndexOf('@'); // see the class comment: the user info runs to the last '@'
        if (at >= 0) {
            String userInfo = rest.substring(0, at);
            rest = rest.substring(at + 1);
            int colon = userInfo.indexOf(':');
            if (colon >= 0) {
                user = decode(userInfo.substring(0, colon), shown);
                password = decode(userInfo.substring(colon + 1), shown);
            } else {
                user = decode(userInfo, shown);
            }
            if (user != null && user.isEmpty()) {
                user = null;
            }
        }
        String query = null;
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = rest.substring(q + 1);
            rest = rest.substring(0, q);
        }
        String path = "";
        int slash = rest.indexOf('/');
        if (slash >= 0) {
            path = rest.substring(slash);
            rest = rest.substring(0, slash);
        }
        List<HostPort> hosts = new ArrayList<>();
        if (!rest.isEmpty()) {
            for (String part : rest.split(",", -1)) {
                hosts.add(parseHost(part, shown));
            }
        }
        Map<String, String> params = new LinkedHashMap<>();
        if (query != null && !query.isEmpty()) {
            for (String kv : query.split("&")) {
                if (kv.isEmpty()) {
                    continue;
                }
                int eq = kv.indexOf('=');
                String k = decode(eq < 0 ? kv : kv.substring(0, eq), shown);
                String v = eq < 0 ? "" : decode(kv.substring(eq + 1), shown);
                params.put(k, v);
            }
        }
        return new BackendUri(scheme, user, password, Collections.unmodifiableList(hosts), path,
                Collections.unmodifiableMap(params), shown);
    }

    private static HostPort parseHost(String part, String shown) {
        if (part.isEmpty()) {
            throw new IllegalArgumentException("uri has an empty host: '" + shown + "'");
        }
        String host;
        String port = null;
        if (part.startsWith("[")) {
            int end = part.indexOf(']');
            if (end < 0) {
                throw new IllegalArgumentException("uri has an unclosed IPv6 address: '" + shown + "'");
            }
            host = part.substring(1, end);
            if (end + 1 < part.length()) {
                if (part.charAt(end + 1) != ':') {
                    throw new IllegalArgumentException("uri has a malformed host: '" + shown + "'");
                }
                port = part.substring(end + 2);
            }
        } else {
            int colon = part.lastIndexOf(':');
            host = colon < 0 ? part : part.substring(0, colon);
            port = colon < 0 ? null : part.substring(colon + 1);
            if (host.indexOf(':') >= 0) {
                throw new IllegalArgumentException(
                        "uri has a malformed host (an IPv6 address needs [brackets]): '" + shown + "'");
            }
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("uri has an empty host: '" + shown + "'");
        }
        int p = -1;
        if (port != null) {
            try {
                p = Integer.parseInt(port);
            } catch (NumberFormatException e) {
                p = -2;
            }
            if (p < 0 || p > 65535) {
                throw new IllegalArgumentException("uri has an invalid port (0-65535): '" + shown + "'");
            }
        }
        return new HostPort(host, p);
    }

    private static String decode(String s, String shown) {
        try {
            return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            // URLDecoder's message quotes the bad escape, which may be part of a password
            throw new IllegalArgumentException("uri has an invalid percent-encoding: '" + shown + "'");
        }
    }

    /**
     * Returns a URI string with its user info (user and password) and secret-looking query values
     * replaced by {@code ***}, safe to show in messages and logs. The shape stays: an empty user
     * or password slot shows as empty ({@code redis://:***@host}). Never throws.
     *
     * @param uri any string, possibly a malformed URI, or {@code null} (returned as {@code "null"})
     * @return the redacted string
     */
    public static String redact(String uri) {
        if (uri == null) {
            return "null";
        }
        String s = uri;
        int sep = s.indexOf("://");
        int start = sep < 0 ? 0 : sep + 3;
        // the user info ends at the last '@', as parse() reads it
        int at = s.lastIndexOf('@');
        if (at >= start) {
            String userInfo = s.substring(start, at);
            int colon = userInfo.indexOf(':');
            String shownUserInfo = colon < 0 ? hidden(userInfo)
                    : hidden(userInfo.substring(0, colon)) + ":" + hidden(userInfo.substring(colon + 1));
            s = s.substring(0, start) + shownUserInfo + s.substring(at);
        }
        int q = s.indexOf('?');
        if (q >= 0) {
            StringBuilder b = new StringBuilder(s.substring(0, q + 1));
            String[] kvs = s.substring(q + 1).split("&", -1);
            for (int i = 0; i < kvs.length; i++) {
                if (i > 0) {
                    b.append('&');
                }
                String kv = kvs[i];
                int eq = kv.indexOf('=');
                String k = eq < 0 ? kv : kv.substring(0, eq);
                if (eq >= 0 && isSecret(k)) {
                    b.append(k).append("=***");
                } else {
                    b.append(kv);
                }
            }
            s = b.toString();
        }
        return s;
    }

    private static String hidden(String part) {
        return part.isEmpty() ? "" : "***";
    }

    /**
     * Removes this URI's secrets from a text that may echo them, such as a server's error reply
     * or a client library's message: every occurrence of the user, the password and the value of
     * a secret-looking query parameter becomes {@code ***} (strings shorter than three characters
     * are left alone: they occur by chance in any text).
     *
     * @param text any text, or null
     * @return the text without the secrets, or null for null
     */
    public String scrub(String text) {
        if (text == null) {
            return null;
        }
        List<String> secrets = new ArrayList<>();
        if (user != null) {
            secrets.add(user);
        }
        if (password != null) {
            secrets.add(password);
        }
        for (Map.Entry<String, String> e : params.entrySet()) {
            if (isSecret(e.getKey())) {
                secrets.add(e.getValue());
            }
        }
        secrets.sort((a, b) -> b.length() - a.length()); // a secret inside a longer one: the longer first
        String out = text;
        for (String secret : secrets) {
            if (secret.length() >= SCRUB_MIN_LENGTH) {
                out = out.replace(secret, "***");
            }
        }
        return out;
    }

    private static boolean isSecret(String param) {
        String k = param.toLowerCase(Locale.ROOT);
        for (String secret : SECRET_PARAMS) {
            if (k.contains(secret)) {
                return true;
            }
        }
        return false;
    }

    /** @return the scheme, lower case */
    public String scheme() {
        return scheme;
    }

    /** @return the user name, if given */
    public Optional<String> user() {
        return Optional.ofNullable(user);
    }

    /** @return the password, if given; never log it */
    public Optional<String> password() {
        return Optional.ofNullable(password);
    }

    /** @return the hosts, in order; empty if the URI named none */
    public List<HostPort> hosts() {
        return hosts;
    }

    /** @return the path, starting with {@code /}, or empty */
    public String path() {
        return path;
    }

    /** @return the query parameters, decoded, in order */
    public Map<String, String> params() {
        return params;
    }

    /**
     * Returns one query parameter.
     *
     * @param name the parameter
     * @return its value, if present
     */
    public Optional<String> param(String name) {
        io.dlock.spi.support.Arguments.notNull("name", name);
        return Optional.ofNullable(params.get(name));
    }

    /**
     * Reads a query parameter that is a duration: an ISO-8601 duration such as {@code PT10S}
     * (upper or lower case), or a whole number of milliseconds such as {@code 2500}. Negative
     * durations are rejected; whether zero or a large value is allowed is the backend's to check.
     *
     * @param name the parameter
     * @return its value, if present
     * @throws IllegalArgumentException naming the parameter, with this URI redacted, if the value
     *     is not a duration or is negative
     */
    public Optional<Duration> durationParam(String name) {
        io.dlock.spi.support.Arguments.notNull("name", name);
        String raw = params.get(name);
        if (raw == null) {
            return Optional.empty();
        }
        String value = raw.trim();
        Duration d = null;
        try {
            if (!value.isEmpty() && value.length() <= 18 && value.chars().allMatch(c -> c >= '0' && c <= '9')) {
                d = Duration.ofMillis(Long.parseLong(value));
            } else if (!value.isEmpty()) {
                d = Duration.parse(value.toUpperCase(Locale.ROOT));
            }
        } catch (DateTimeParseException | ArithmeticException | NumberFormatException e) {
            d = null;
        }
        if (d == null || d.isNegative()) {
            throw new IllegalArgumentException("uri parameter " + name + " must be an ISO-8601 duration such as PT10S "
                    + "or a number of milliseconds, was '" + raw + "': '" + redacted + "'");
        }
        return Optional.of(d);
    }

    /** @return the URI with secrets redacted */
    @Override
    public String toString() {
        return redacted;
    }
}
