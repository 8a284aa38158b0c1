package io.dlock.cli;

import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
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
     * Opens a client, turning a bad URI into a usage error and an unreachable backend into
     * {@link ExitCodes#UNREACHABLE}.
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
     * @throws CliException with {@link ExitCodes#USAGE} for a bad URI, {@link ExitCodes#UNREACHABLE}
     *     for a backend that does not answer
     */
    public static LockClient open(String uri, Duration operationTimeout, LockOptions defaults) {
        LockClientConfig config;
        try {
            config = LockClientConfig.builder(uri).operationTimeout(operationTimeout).defaultLockOptions(defaults).build();
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, "bad --uri '" + BackendUri.redact(uri) + "': " + e.getMessage(), e);
        }
        try {
            return LockClient.open(config);
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, "bad --uri '" + BackendUri.redact(uri) + "': " + e.getMessage(), e);
        } catch (LockBackendException e) {
            throw unreachable(uri, e);
        }
    }

    /**
     * Describes a backend failure.
     *
     * @param uri the backend URI
     * @param e the failure
     * @return the exception to throw, with {@link ExitCodes#UNREACHABLE}
     */
    public static CliException unreachable(String uri, LockBackendException e) {
        return new CliException(ExitCodes.UNREACHABLE, "the backend at " + BackendUri.redact(uri)
                + " cannot be reached or failed: " + e.getMessage(), e);
    }
}
