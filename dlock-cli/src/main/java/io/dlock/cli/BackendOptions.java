package io.dlock.cli;

import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockConfigurationException;
import io.dlock.LockOptions;
import io.dlock.spi.BackendUri;
import java.time.Duration;
import picocli.CommandLine.Option;

/** The options every command that talks to a backend shares: the URI and the operation timeout. */
final class BackendOptions {

    @Option(names = {"-u", "--uri"}, paramLabel = "URI", defaultValue = "${env:DLOCK_URI}",
            description = "The backend's URI; its scheme picks the backend: redis, rediss, zookeeper, zk, etcd, "
                    + "dynamodb or mem (see dlock --help). Default: the DLOCK_URI environment variable.")
    private String uri;

    @Option(names = "--operation-timeout", paramLabel = "DURATION", defaultValue = "5s", converter = Durations.class,
            description = "The longest one backend call may take before it fails (default: ${DEFAULT-VALUE}).")
    private Duration operationTimeout;

    /** Creates the options (picocli fills them). */
    public BackendOptions() { }

    /** @return the URI as given, or null */
    public String uri() {
        return uri;
    }

    /** @return the URI with its password masked, for messages */
    public String redactedUri() {
        return uri == null ? "(none)" : BackendUri.redact(uri);
    }

    /** @return the operation timeout */
    public Duration operationTimeout() {
        return operationTimeout;
    }

    /**
     * Opens a client, turning a bad URI or a configuration the backend refuses into a usage error
     * and an unreachable backend into {@link ExitCodes#UNREACHABLE}.
     *
     * @param defaults the lock options of the client's locks
     * @return the open client
     * @throws CliException with the exit status to use
     */
    public LockClient open(LockOptions defaults) {
        if (uri == null || uri.isBlank()) {
            throw new CliException(ExitCodes.USAGE, "no backend given: use --uri URI or set DLOCK_URI "
                    + "(e.g. redis://127.0.0.1:6379 or zookeeper://127.0.0.1:2181)");
        }
        return open(uri, operationTimeout, defaults);
    }

    /**
     * Opens a client for a URI, mapping failures to exit statuses.
     *
     * @param uri the backend URI
     * @param operationTimeout the operation timeout
     * @param defaults the lock options of the client's locks
     * @return the open client
     * @throws CliException with {@link ExitCodes#USAGE} for a bad URI or a configuration the
     *     backend refuses, {@link ExitCodes#UNREACHABLE} for a backend that does not answer
     */
    public static LockClient open(String uri, Duration operationTimeout, LockOptions defaults) {
        LockClientConfig.Builder builder;
        try {
            builder = LockClientConfig.builder(uri);
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, "bad --uri '" + BackendUri.redact(uri) + "': " + e.getMessage(), e);
        }
        try {
            builder.operationTimeout(operationTimeout);
        } catch (IllegalArgumentException e) {
            // the library's message names its parameter (operationTimeout); name the option instead
            throw new CliException(ExitCodes.USAGE, "--operation-timeout must be positive, was "
                    + Durations.format(operationTimeout == null ? Duration.ZERO : operationTimeout), e);
        }
        LockClientConfig config = builder.defaultLockOptions(defaults).build();
        try {
            return LockClient.open(config);
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, "bad --uri '" + BackendUri.redact(uri) + "': " + e.getMessage(), e);
        } catch (LockBackendException e) {
            throw failure(uri, e);
        }
    }

    /**
     * How long a command waits for the client to close after its backend failed: it has said what
     * failed, and a backend that does not answer would only hold the exit up.
     */
    static final Duration CLOSE_AFTER_FAILURE = Duration.ofMillis(100);

    /**
     * Closes a client without waiting long for it, for a command that ends because the backend
     * failed or a lease was lost: {@code close()} waits, up to about an operation timeout, for
     * requests still in flight to a backend that is most likely not answering (the clean-up of a
     * failed acquire, a release). The process exits anyway, and the server ends what is left by
     * expiry. The close goes on, on a daemon thread, for as long as the process lives.
     *
     * @param client the client
     * @param wait how long to wait for the close
     */
    static void closeBriefly(LockClient client, Duration wait) {
        Thread closer = new Thread(client::close, "dlock-close");
        closer.setDaemon(true);
        closer.start();
        try {
            closer.join(Math.max(1, wait.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Describes a backend failure: a configuration the backend refuses (a
     * {@link LockConfigurationException}: retrying cannot help, the URI or the server must change)
     * is {@link ExitCodes#USAGE}, anything else {@link ExitCodes#UNREACHABLE}.
     *
     * @param uri the backend URI
     * @param e the failure
     * @return the exception to throw
     */
    public static CliException failure(String uri, LockBackendException e) {
        if (e instanceof LockConfigurationException c) {
            return new CliException(ExitCodes.USAGE, "the backend at " + BackendUri.redact(uri)
                    + " refuses the configuration (" + describe(c.kind()) + "); retrying will not help: "
                    + e.getMessage(), e);
        }
        return new CliException(ExitCodes.UNREACHABLE, "the backend at " + BackendUri.redact(uri)
                + " cannot be reached or failed: " + e.getMessage(), e);
    }

    /** @return what a configuration failure of this kind is about, for messages */
    static String describe(LockConfigurationException.Kind kind) {
        return switch (kind) {
            case CREDENTIALS -> "credentials rejected";
            case PERMISSION -> "permission denied";
            case MISSING_RESOURCE -> "a resource it needs is missing";
            case TLS -> "TLS mismatch";
            case INCOMPATIBLE_SERVER -> "a server dlock cannot use";
        };
    }
}
