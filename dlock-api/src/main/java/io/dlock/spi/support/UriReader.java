package io.dlock.spi.support;

import io.dlock.spi.BackendUri;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads a backend's URI: its scheme, hosts, credentials, path and query parameters, each checked,
 * with the backend's defaults applied. Every rejection is an {@link IllegalArgumentException}
 * whose message names the part that is wrong and ends with the URI as {@link BackendUri#toString()}
 * shows it (credentials and secret parameters redacted); a rejected secret's value is never shown.
 *
 * <p>Created per URI by {@link #of}, which already rejects parameters the backend does not know
 * (all of them, in one message). Immutable and thread-safe.
 */
public final class UriReader {

    /**
     * A user name and password from the URI's user info.
     *
     * @param user the user, or {@code null} for a password alone
     * @param password the password
     */
    public record Credentials(String user, String password) {

        /**
         * @throws IllegalArgumentException if {@code password} is {@code null}
         */
        public Credentials {
            Arguments.notNull("password", password);
        }

        /** @return the user and the password redacted */
        @Override
        public String toString() {
            return "Credentials[user=" + user + ", password=***]";
        }
    }

    private final BackendUri uri;
    private final String backend;
    private final String shown;

    private UriReader(BackendUri uri, String backend) {
        this.uri = uri;
        this.backend = backend;
        this.shown = uri.toString();
    }

    /**
     * Starts reading a URI, rejecting every query parameter not in {@code known}.
     *
     * @param uri the parsed URI
     * @param backend the backend's name for messages, e.g. {@code dlock-redis}
     * @param known the parameters the backend understands
     * @return the reader
     * @throws IllegalArgumentException if an argument is null, or naming every unknown parameter and
     *     the known ones
     */
    public static UriReader of(BackendUri uri, String backend, Set<String> known) {
        if (uri == null) {
            throw new IllegalArgumentException("uri must not be null");
        }
        if (backend == null || backend.isBlank()) {
            throw new IllegalArgumentException("backend must be a name, was " + (backend == null ? "null" : "blank"));
        }
        if (known == null) {
            throw new IllegalArgumentException("known must not be null");
        }
        UriReader r = new UriReader(uri, backend);
        Set<String> unknown = new TreeSet<>(uri.params().keySet());
        unknown.removeAll(known);
        if (!unknown.isEmpty()) {
            String names = String.join("', '", unknown);
            throw r.invalid(unknown.size() == 1 ? "parameter '" + names + "'" : "parameters '" + names + "'",
                    (unknown.size() == 1 ? "is" : "are") + " unknown to " + backend + " (known: "
                    + (known.isEmpty() ? "none" : String.join(", ", new TreeSet<>(known))) + ")");
        }
        return r;
    }

    /** @return the URI read */
    public BackendUri uri() {
        return uri;
    }

    /**
     * Returns an exception for a part of the URI, for checks only the backend knows.
     *
     * @param part the part, e.g. {@code "parameter prefix"} or {@code "host"}
     * @param problem what is wrong, e.g. {@code "must not be empty"}
     * @return {@code uri <part> <problem>: '<redacted uri>'}, to throw
     */
    public IllegalArgumentException invalid(String part, String problem) {
        Arguments.notNull("part", part);
        Arguments.notNull("problem", problem);
        return new IllegalArgumentException("uri " + part + " " + problem + ": '" + shown + "'");
    }

    /**
     * Checks the scheme.
     *
     * @param allowed the schemes the backend serves, the first being its plain one
     * @return the URI's scheme, one of {@code allowed}
     * @throws IllegalArgumentException if the scheme is another
     */
    public String scheme(String... allowed) {
        Arguments.notNull("allowed", allowed);
        for (String s : allowed) {
            if (s.equals(uri.scheme())) {
                return s;
            }
        }
        throw invalid("scheme", "must be " + String.join(" or ", allowed) + ", was '" + uri.scheme() + "'");
    }

    /**
     * Returns the hosts with the default port applied.
     *
     * @param defaultPort the port of a host given without one
     * @param max the most hosts the backend talks to
     * @param example how the hosts are written, for the message when there are none, e.g.
     *     {@code redis://host:port}
     * @return one to {@code max} hosts, each with a port from 1 to 65535
     * @throws IllegalArgumentException if there is no host, too many, or a port 0
     */
    public List<BackendUri.HostPort> hosts(int defaultPort, int max, String example) {
        Arguments.notNull("example", example);
        List<BackendUri.HostPort> given = uri.hosts();
        if (given.isEmpty()) {
            throw invalid("host", "is missing: write " + example);
        }
        if (given.size() > max) {
            throw invalid("host", "must be " + (max == 1 ? "one host" : "at most " + max + " hosts") + " for " + backend
                    + ", but the uri names " + given.size() + " " + given);
        }
        List<BackendUri.HostPort> hosts = new ArrayList<>();
        for (BackendUri.HostPort hp : given) {
            int port = hp.portOr(defaultPort);
            if (port == 0) {
                throw invalid("port", "must be 1 to 65535, was 0");
            }
            hosts.add(new BackendUri.HostPort(hp.host(), port));
        }
        return Collections.unmodifiableList(hosts);
    }

    /**
     * Returns the credentials of the user info. A user without a password is always rejected,
     * without echoing it: it is as likely a password written without the {@code ':'}.
     *
     * @param passwordAlone whether a password without a user is allowed ({@code :PASSWORD@})
     * @param hint how to write them, e.g. {@code etcd://USER:PASSWORD@host:port}
     * @return the credentials, or empty without user info
     * @throws IllegalArgumentException if the user info is incomplete or the password empty
     */
    public Optional<Credentials> credentials(boolean passwordAlone, String hint) {
        Arguments.notNull("hint", hint);
        String user = uri.user().orElse(null);
        String password = uri.password().orElse(null);
        if (user == null && password == null) {
            return Optional.empty();
        }
        if (password == null) {
            throw invalid("user info", "has no ':', so it would be a user name without a password; write " + hint);
        }
        if (user == null && !passwordAlone) {
            throw invalid("user", "is missing: " + backend + " needs a user name with the password; write " + hint);
        }
        if (password.isEmpty()) {
            throw invalid("password", "is empty: leave out the user info or give the password");
        }
        return Optional.of(new Credentials(user, password));
    }

    /**
     * Rejects a path other than none or {@code /}.
     *
     * @param hint what to write instead, e.g. {@code set a key prefix with ?prefix=...}
     * @throws IllegalArgumentException if the URI has a path
     */
    public void noPath(String hint) {
        Arguments.notNull("hint", hint);
        if (!uri.path().isEmpty() && !uri.path().equals("/")) {
            throw invalid("path '" + uri.path() + "'", "is not understood by " + backend + " (" + hint + ")");
        }
    }

    /**
     * Returns a parameter that, when present, must not be empty. Its value is never shown in a
     * message, so this suits secrets.
     *
     * @param name the parameter
     * @return the value, or empty when absent
     * @throws IllegalArgumentException if present and empty
     */
    public Optional<String> text(String name) {
        Arguments.notNull("name", name);
        String v = uri.params().get(name);
        if (v == null) {
            return Optional.empty();
        }
        if (v.isEmpty()) {
            throw invalid("parameter " + name, "is empty");
        }
        return Optional.of(v);
    }

    /**
     * Returns a parameter that must not be empty, or a default when absent.
     *
     * @param name the parameter
     * @param defaultValue its value when absent
     * @return the value
     * @throws IllegalArgumentException if present and empty
     */
    public String text(String name, String defaultValue) {
        Arguments.notNull("name", name);
        Arguments.notNull("defaultValue", defaultValue);
        String v = uri.params().get(name);
        if (v == null) {
            return defaultValue;
        }
        if (v.isEmpty()) {
            throw invalid("parameter " + name, "must not be empty (default '" + defaultValue + "')");
        }
        return v;
    }

    /**
     * Returns a whole-number parameter.
     *
     * @param name the parameter
     * @param defaultValue its value when absent
     * @param min the smallest value allowed
     * @param max the largest value allowed
     * @return the value
     * @throws IllegalArgumentException if it is not a number from {@code min} to {@code max}
     */
    public int integer(String name, int defaultValue, int min, int max) {
        Arguments.notNull("name", name);
        String raw = uri.params().get(name);
        if (raw == null) {
            return defaultValue;
        }
        String v = raw.trim();
        long n = v.matches("-?[0-9]{1,10}") ? Long.parseLong(v) : Long.MIN_VALUE;
        if (n < min || n > max) {
            throw invalid("parameter " + name, "must be a number from " + min + " to " + max + ", was '" + raw + "'");
        }
        return (int) n;
    }

    /**
     * Returns a flag: {@code true}, {@code false}, or present without a value (true).
     *
     * @param name the parameter
     * @param defaultValue its value when absent
     * @return the value
     * @throws IllegalArgumentException if it is anything else
     */
    public boolean flag(String name, boolean defaultValue) {
        Arguments.notNull("name", name);
        String raw = uri.params().get(name);
        if (raw == null) {
            return defaultValue;
        }
        String v = raw.trim().toLowerCase(Locale.ROOT);
        if (v.isEmpty() || v.equals("true")) {
            return true;
        }
        if (v.equals("false")) {
            return false;
        }
        throw invalid("parameter " + name, "must be true or false, was '" + raw + "'");
    }

    /**
     * Returns a duration parameter: ISO-8601 ({@code PT10S}) or a number of milliseconds.
     *
     * @param name the parameter
     * @param min the shortest allowed
     * @param max the longest allowed
     * @param zeroAllowed whether zero is allowed besides the range (it usually turns something off)
     * @return the value, or empty when absent
     * @throws IllegalArgumentException if it is not a duration, or out of range
     */
    public Optional<Duration> duration(String name, Duration min, Duration max, boolean zeroAllowed) {
        Arguments.notNull("name", name);
        Arguments.notNull("min", min);
        Arguments.notNull("max", max);
        Optional<Duration> d = uri.durationParam(name);
        if (d.isPresent() && !(zeroAllowed && d.get().isZero())
                && (d.get().compareTo(min) < 0 || d.get().compareTo(max) > 0)) {
            throw invalid("parameter " + name, "must be " + (zeroAllowed ? "0 or " : "") + "from " + min + " to " + max
                    + ", was '" + uri.params().get(name) + "'");
        }
        return d;
    }

    /**
     * Returns a parameter naming one of an enum's constants, case-insensitive.
     *
     * @param name the parameter
     * @param defaultValue its value when absent, which also gives the enum
     * @param <E> the enum
     * @return the value
     * @throws IllegalArgumentException if it names no constant
     */
    public <E extends Enum<E>> E choice(String name, E defaultValue) {
        Arguments.notNull("name", name);
        Arguments.notNull("defaultValue", defaultValue);
        String raw = uri.params().get(name);
        if (raw == null) {
            return defaultValue;
        }
        for (E e : defaultValue.getDeclaringClass().getEnumConstants()) {
            if (e.name().equalsIgnoreCase(raw.trim())) {
                return e;
            }
        }
        List<String> names = new ArrayList<>();
        for (E e : defaultValue.getDeclaringClass().getEnumConstants()) {
            names.add(e.name().toLowerCase(Locale.ROOT));
        }
        throw invalid("parameter " + name, "must be " + String.join(", ", names) + ", was '" + raw + "'");
    }

    /**
     * Returns a parameter naming a file that must be readable now.
     *
     * @param name the parameter
     * @return the file, or empty when absent
     * @throws IllegalArgumentException if the path is invalid or the file cannot be read
     */
    public Optional<Path> readableFile(String name) {
        Arguments.notNull("name", name);
        String v = uri.params().get(name);
        if (v == null) {
            return Optional.empty();
        }
        Path p;
        try {
            p = Path.of(v);
        } catch (InvalidPathException e) {
            throw invalid("parameter " + name, "is not a valid path");
        }
        if (!Files.isReadable(p)) {
            throw invalid("parameter " + name, "names a file that cannot be read (" + v + ")");
        }
        return Optional.of(p);
    }

    /**
     * Writes a host and port as an authority: an IPv6 address in brackets.
     *
     * @param hp the host and port
     * @return e.g. {@code 10.0.0.5:6379} or {@code [::1]:6379}
     */
    public static String authority(BackendUri.HostPort hp) {
        Arguments.notNull("hp", hp);
        return (hp.host().indexOf(':') >= 0 ? "[" + hp.host() + "]" : hp.host()) + (hp.port() < 0 ? "" : ":" + hp.port());
    }
}
