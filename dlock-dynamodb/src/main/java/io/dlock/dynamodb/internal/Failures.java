package io.dlock.dynamodb.internal;

import io.dlock.LockBackendException;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.spi.support.BoundedCalls;
import java.io.EOFException;
import java.io.IOException;
import java.net.SocketException;
import java.time.Duration;
import java.util.Set;
import javax.net.ssl.SSLException;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.AbortedException;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;

/**
 * Turns the SDK's exceptions into {@link LockBackendException}s that say what failed, on which
 * table and lock, and what to do about it: a missing table, a missing permission, rejected
 * credentials, throttling, no answer in time. Messages never contain credentials: the SDK's own
 * messages do not carry them (and are scrubbed of the URI's secret parameters all the same), and
 * the URI is only ever shown redacted.
 */
final class Failures implements BoundedCalls.Failures {

    /** Error codes DynamoDB (or its front door) answers when the credentials themselves are wrong. */
    private static final Set<String> BAD_CREDENTIALS = Set.of("UnrecognizedClientException",
            "InvalidSignatureException", "SignatureDoesNotMatch", "IncompleteSignature", "IncompleteSignatureException",
            "MissingAuthenticationToken", "MissingAuthenticationTokenException", "ExpiredToken", "ExpiredTokenException",
            "InvalidClientTokenId");

    /** The thread was interrupted during a call: its outcome is unknown, and the interrupt flag is set again. */
    static final class Interrupted extends LockBackendException {
        private static final long serialVersionUID = 1L;

        Interrupted(String message, String lockName, Throwable cause) {
            super(message, lockName, cause);
        }
    }

    private final DynamoDbSettings settings;
    private final Duration timeout;

    Failures(DynamoDbSettings settings, Duration timeout) {
        this.settings = settings;
        this.timeout = timeout;
    }

    /**
     * Maps an SDK failure. What every retry would meet too is a {@link LockConfigurationException},
     * told by the SDK's exception types and DynamoDB's error codes: a missing table
     * ({@code ResourceNotFoundException}) is {@code MISSING_RESOURCE}, {@code AccessDeniedException}
     * {@code PERMISSION}, rejected or unavailable credentials {@code CREDENTIALS}, a
     * {@code ValidationException} (the table's key is not dlock's) {@code INCOMPATIBLE_SERVER}, an
     * {@link SSLException} under the SDK's client exception (an https endpoint that does not speak
     * TLS, an untrusted certificate) {@code TLS}. Throttling, server errors, timeouts and connection
     * failures are retryable.
     *
     * @param operation what dlock was doing, e.g. {@code acquire}
     * @param action the DynamoDB action, e.g. {@code UpdateItem}
     * @param lockName the lock, or null
     * @param e the SDK's exception
     * @return the exception to throw
     */
    LockBackendException of(String operation, String action, String lockName, SdkException e) {
        String what = what(operation, lockName);
        if (e instanceof AbortedException) {
            // the SDK saw its thread interrupted: only Calls does that, when the caller gave up or the backend closed
            return new LockBackendException(what + " was cut short; its outcome is unknown", lockName, e);
        }
        if (e instanceof ResourceNotFoundException) {
            return new LockConfigurationException(Kind.MISSING_RESOURCE, what + " failed: the table '" + settings.table
                    + "' does not exist (in the region and account the credentials point at): create it with a partition"
                    + " key named '" + LockItem.NAME + "' of type String and no sort key, or add createTable=true to the"
                    + " URI", lockName, e);
        }
        if (e instanceof AwsServiceException ase) {
            String code = ase.awsErrorDetails() == null ? null : ase.awsErrorDetails().errorCode();
            String message = ase.awsErrorDetails() == null ? null : ase.awsErrorDetails().errorMessage();
            // the URI's secret parameters scrubbed out, should a reply ever echo one
            String said = settings.uri.scrub((code == null ? "HTTP " + ase.statusCode() : code)
                    + (message == null ? "" : ": " + message));
            if ("AccessDeniedException".equals(code)) {
                return new LockConfigurationException(Kind.PERMISSION, what + " failed: the credentials are not allowed"
                        + " dynamodb:" + action + " on table '" + settings.table + "' (" + said + "). Grant dynamodb:"
                        + action + " on the table; dlock needs " + neededPermissions() + ".", lockName, e);
            }
            if (code != null && BAD_CREDENTIALS.contains(code)) {
                return new LockConfigurationException(Kind.CREDENTIALS, what + " failed: DynamoDB rejected the credentials"
                        + " (" + code + "). Check the accessKeyId, secretAccessKey and sessionToken URI parameters, or the"
                        + " SDK's default credential chain when the URI gives none.", lockName, e);
            }
            if ("ValidationException".equals(code)) {
                // dlock's requests are valid for a table with its key: DynamoDB finds them invalid when the key differs
                return new LockConfigurationException(Kind.INCOMPATIBLE_SERVER, what + " failed: DynamoDB rejected the"
                        + " request (" + said + "). Check that table '" + settings.table + "' has a partition key named '"
                        + LockItem.NAME + "' of type String and no sort key.", lockName, e);
            }
            if (ase.isThrottlingException()) {
                return new LockBackendException(what + " was throttled by DynamoDB (" + said + "): the table's capacity"
                        + " or the account's request rate is exhausted", lockName, e);
            }
            if (code == null) {
                // an HTTP answer without a DynamoDB error in it: something else serves the endpoint; a
                // 5xx may also be a proxy in front of DynamoDB that is failing for now
                String m = what + " failed: " + settings.server() + " answered HTTP " + ase.statusCode()
                        + " without a DynamoDB error: check that the endpoint is DynamoDB's (or DynamoDB Local's)";
                return ase.statusCode() >= 400 && ase.statusCode() < 500
                        ? new LockConfigurationException(Kind.INCOMPATIBLE_SERVER, m, lockName, e)
                        : new LockBackendException(m, lockName, e);
            }
            return new LockBackendException(what + " failed: " + said + " (HTTP " + ase.statusCode() + ")", lockName, e);
        }
        if (e instanceof ApiCallTimeoutException || e instanceof ApiCallAttemptTimeoutException) {
            return new LockBackendException(what + " got no answer from " + settings.server() + " within " + timeout
                    + " (the operation timeout)", lockName, e);
        }
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : settings.uri.scrub(e.getMessage());
        if (hasCause(e, NoCredentials.class)) {
            return new LockConfigurationException(Kind.CREDENTIALS, what + " failed: no usable AWS credentials were"
                    + " found. Give accessKeyId and secretAccessKey in the URI, name a profile, or configure the SDK's"
                    + " default chain. " + message, lockName, e);
        }
        if (hasCause(e, SSLException.class) && !hasCause(e, EOFException.class) && !hasCause(e, SocketException.class)) {
            return new LockConfigurationException(Kind.TLS, what + " failed: the TLS connection to " + settings.server()
                    + " failed: " + message + ". Check that an https endpoint speaks TLS (or write http://) and that its"
                    + " certificate is trusted and names its host.", lockName, e);
        }
        if (notHttp(e)) {
            return new LockConfigurationException(Kind.INCOMPATIBLE_SERVER, what + " failed: " + settings.server()
                    + " does not speak HTTP: it answered with something that is not an HTTP response (" + message
                    + "); check the host and port of the endpoint", lockName, e);
        }
        return new LockBackendException(what + " failed: could not reach " + settings.server() + ": " + message,
                lockName, e);
    }

    /**
     * Marks a failure of the credentials provider (no credentials in the default chain, a profile
     * that does not exist or has none), which the SDK reports as a plain client exception: the
     * backend's provider wraps every such failure in one, so that {@link #of} tells it by type.
     */
    static final class NoCredentials extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NoCredentials(RuntimeException cause) {
            super("the credentials provider failed", cause);
        }
    }

    /**
     * Whether the HTTP client read an answer that is not HTTP: the JDK's URL connection says
     * "Invalid Http response" (it has no exception type of its own for it).
     */
    private static boolean notHttp(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof IOException && "Invalid Http response".equals(t.getMessage())) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasCause(Throwable e, Class<? extends Throwable> type) {
        int depth = 0;
        for (Throwable t = e; t != null && depth < 32; t = t.getCause() == t ? null : t.getCause(), depth++) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The caller was interrupted while a call was in flight: its outcome is unknown, and the kit
     * sets the flag again.
     */
    @Override
    public Interrupted interrupted(BoundedCalls.Call call, InterruptedException cause) {
        return new Interrupted(what(call.operation(), call.lockName()) + " was interrupted; its outcome is unknown",
                call.lockName(), cause);
    }

    /** A call that ran past its timeout without the SDK giving up first. */
    @Override
    public LockBackendException timedOut(BoundedCalls.Call call, Duration waited) {
        return new LockBackendException(what(call.operation(), call.lockName()) + " got no answer from "
                + settings.server() + " within " + timeout + " (the operation timeout)", call.lockName(), null);
    }

    /** A call refused because the backend is closed, or cut short by its close. */
    @Override
    public LockBackendException closed(BoundedCalls.Call call) {
        return new LockBackendException(what(call.operation(), call.lockName()) + " was refused: the client is closed",
                call.lockName(), null);
    }

    /** Every call thread busy and the queue full: not sent. */
    @Override
    public LockBackendException overloaded(BoundedCalls.Call call, int threads, int queued) {
        return new LockBackendException(what(call.operation(), call.lockName()) + " was not sent: " + queued
                + " calls of this client already wait for one of its " + threads + " call threads; try again later",
                call.lockName(), null);
    }

    /** A call that failed with a checked exception (the SDK throws unchecked ones, which {@link #of} maps). */
    @Override
    public LockBackendException failed(BoundedCalls.Call call, Throwable cause) {
        return new LockBackendException(what(call.operation(), call.lockName()) + " failed: " + cause, call.lockName(),
                cause);
    }

    private String what(String operation, String lockName) {
        return "the " + operation + (lockName == null ? "" : " of lock '" + lockName + "'") + " on DynamoDB " + settings;
    }

    /**
     * A lock item that dlock did not write.
     *
     * @param operation what dlock was doing
     * @param lockName the lock
     * @param e what is wrong with the item
     * @return the exception to throw
     */
    LockBackendException odd(String operation, String lockName, IllegalStateException e) {
        return new LockConfigurationException(Kind.INCOMPATIBLE_SERVER, "the " + operation + " of lock '" + lockName + "' on DynamoDB " + settings
                + " found an item dlock did not write (" + e.getMessage() + "): check that no other application writes"
                + " to the table", lockName, e);
    }

    private String neededPermissions() {
        StringBuilder b = new StringBuilder("dynamodb:UpdateItem and dynamodb:GetItem");
        if (settings.renewal != DynamoDbSettings.Renewal.UPDATE) {
            b.append(", dynamodb:TransactWriteItems (renewal=" + settings.renewal.name().toLowerCase(java.util.Locale.ROOT)
                    + ")");
        }
        if (settings.createTable) {
            b.append(", dynamodb:DescribeTable and dynamodb:CreateTable (createTable=true)");
        }
        return b.toString();
    }
}
