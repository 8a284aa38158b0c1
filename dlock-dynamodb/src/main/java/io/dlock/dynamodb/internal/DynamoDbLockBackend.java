package io.dlock.dynamodb.internal;

import io.dlock.spi.support.LeaseTimes;
import io.dlock.Capability;
import io.dlock.LockBackendException;
import io.dlock.LockHolder;
import io.dlock.Ticker;
import io.dlock.spi.support.BoundedCalls;
import io.dlock.spi.support.Deadline;
import io.dlock.spi.support.Ids;
import io.dlock.spi.support.RetryingCleaner;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.BackendContext;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.RenewOutcome;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.retry.RetryMode;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClientBuilder;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;
import software.amazon.awssdk.services.dynamodb.model.TransactionConflictException;
import software.amazon.awssdk.services.dynamodb.model.Update;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * The DynamoDB {@link LockBackend}: one item per lock name, written only by conditional
 * {@code UpdateItem}s, on the AWS SDK's synchronous client over the JDK's URL connection. Public
 * only so that {@code io.dlock.dynamodb.DynamoDbLockProvider} can open it; not an API.
 *
 * <p>Every call is bounded by the operation timeout (the SDK's API call timeout; each attempt gets
 * half of it, so one retry of a stalled attempt fits). Thread-safe.
 */
public final class DynamoDbLockBackend implements LockBackend<Void> {

    private static final Logger LOG = LoggerFactory.getLogger(DynamoDbLockBackend.class);

    private static final Set<Capability> CAPABILITIES = Collections.unmodifiableSet(
            EnumSet.of(Capability.FENCING, Capability.HOLDER_QUERY));

    /** The most updates in one TransactWriteItems: DynamoDB's limit. */
    static final int TRANSACTION_MAX = 100;

    /** How many single renewals run at once. */
    static final int RENEW_PARALLELISM = 8;

    private static final String CCF = "ConditionalCheckFailed";
    private static final AttributeValue ONE = AttributeValue.fromN("1");

    private static final String ACQUIRE_UPDATE = "SET #o = :me, #r = :rvn, #l = :l, #w = :w ADD #t :one";
    private static final String RENEW_UPDATE = "SET #r = :rvn, #l = :l, #w = :w";
    private static final String RELEASE_UPDATE = "SET #r = :rvn, #w = :w REMOVE #o, #l";
    private static final String HELD_BY_GRANT = "#o = :me AND #t = :tok";
    private static final String HELD_BY_OWNER = "#o = :me";
    private static final String PROJECTION = "#o, #t, #r, #l, #q";

    private final DynamoDbSettings settings;
    private final Failures failures;
    private final Ticker ticker;
    private final Clock clock;
    private final Duration retryBase;
    private final Duration retryCap;
    private final Duration timeout;
    private final Duration abandonTimeout;
    private final SdkHttpClient http;
    private final AwsCredentialsProvider credentials;
    private final ScheduledThreadPoolExecutor sdkTimer;
    private final BoundedCalls renewals;
    private final DynamoDbClient client;
    private final Calls calls;
    private final RetryingCleaner cleaner;
    private final Sightings sightings = new Sightings();
    /**
     * Cleared for good when {@code renewal=auto} meets a principal that may not call
     * TransactWriteItems: renewals are then single updates, as before the default changed.
     */
    private volatile boolean transactionsAllowed = true;

    private DynamoDbLockBackend(BackendContext context, DynamoDbSettings settings,
                                Consumer<ClientOverrideConfiguration.Builder> extra) {
        this.settings = settings;
        this.timeout = context.operationTimeout();
        this.failures = new Failures(settings, timeout);
        this.ticker = context.ticker();
        this.clock = context.clock();
        this.retryBase = context.config().retryBase();
        this.retryCap = context.config().retryCap();
        // undoing a grant whose answer was lost is a courtesy (the lock is also taken over after its
        // lease time): do not double the caller's wait for it
        // one clean-up request goes through the SDK over HTTPS: allow it 200 ms at least
        this.abandonTimeout = LeaseTimes.abandonBudget(timeout, Duration.ofMillis(200));
        Region region = region(settings);
        this.sdkTimer = new ScheduledThreadPoolExecutor(1, context.threadFactory());
        sdkTimer.setRemoveOnCancelPolicy(true);
        sdkTimer.setKeepAliveTime(10, TimeUnit.SECONDS);
        sdkTimer.allowCoreThreadTimeOut(true);
        this.http = UrlConnectionHttpClient.builder().connectionTimeout(timeout).socketTimeout(timeout).build();
        this.credentials = credentials(settings);
        this.calls = new Calls(context.threadFactory(), failures, timeout);
        this.renewals = BoundedCalls.withThreads("DynamoDB", timeout, failures, context.threadFactory(),
                RENEW_PARALLELISM, Calls.QUEUE);
        this.cleaner = RetryingCleaner.start("DynamoDB", context.threadFactory(), RetryingCleaner.Settings.defaults());
        try {
            ClientOverrideConfiguration.Builder override = ClientOverrideConfiguration.builder()
                    .apiCallTimeout(timeout)
                    .apiCallAttemptTimeout(max(timeout.dividedBy(2), min(timeout, Duration.ofMillis(100))))
                    .retryStrategy(RetryMode.STANDARD)
                    .scheduledExecutorService(sdkTimer);
            extra.accept(override);
            DynamoDbClientBuilder builder = DynamoDbClient.builder()
                    .httpClient(http)
                    .credentialsProvider(failuresMarked(credentials))
                    .region(region)
                    .overrideConfiguration(override.build());
            if (settings.endpoint != null) {
                builder.endpointOverride(settings.endpoint);
            }
            this.client = builder.build();
        } catch (RuntimeException e) {
            closeQuietly();
            throw e;
        }
    }

    /**
     * Opens a backend for one client. Without {@code createTable=true} there is no I/O: the table
     * is first used by the first call.
     *
     * @param context the client's URI, timeouts, clocks and thread factory
     * @return the backend
     * @throws IllegalArgumentException if the URI is not a valid {@code dynamodb://} URI, naming the
     *     part, or no region is given and none is configured
     * @throws LockBackendException if {@code createTable=true} and the table could not be found or
     *     made ready within the bounds of {@link TableSetup}
     */
    public static DynamoDbLockBackend open(BackendContext context) {
        return open(context, b -> { });
    }

    /**
     * Opens a backend with extra SDK client settings: for tests (request counting interceptors).
     * The timeouts set by dlock must not be changed.
     *
     * @param context the client's context
     * @param extra adds to the SDK client's override configuration
     * @return the backend
     */
    public static DynamoDbLockBackend open(BackendContext context, Consumer<ClientOverrideConfiguration.Builder> extra) {
        DynamoDbSettings settings = DynamoDbSettings.from(context.uri());
        DynamoDbLockBackend backend = new DynamoDbLockBackend(context, settings, extra);
        if (settings.createTable) {
            try {
                new TableSetup(backend.client, backend.calls, settings, backend.failures, context.operationTimeout())
                        .ensureTable();
            } catch (RuntimeException e) {
                backend.close();
                throw e;
            }
        }
        return backend;
    }

    private static Region region(DynamoDbSettings settings) {
        if (settings.region != null) {
            return Region.of(settings.region);
        }
        try {
            return new DefaultAwsRegionProviderChain().getRegion();
        } catch (SdkClientException e) {
            throw new IllegalArgumentException("uri parameter region is missing and the SDK's default region chain "
                    + "(AWS_REGION, the profile, instance metadata) found none: write dynamodb://"
                    + settings.table + "?region=REGION", e);
        }
    }

    private static AwsCredentialsProvider credentials(DynamoDbSettings settings) {
        if (settings.accessKeyId != null) {
            return StaticCredentialsProvider.create(settings.sessionToken == null
                    ? AwsBasicCredentials.create(settings.accessKeyId, settings.secretAccessKey)
                    : AwsSessionCredentials.create(settings.accessKeyId, settings.secretAccessKey, settings.sessionToken));
        }
        if (settings.profile != null) {
            return ProfileCredentialsProvider.builder().profileName(settings.profile).build();
        }
        return DefaultCredentialsProvider.builder().build();
    }

    /** The provider, with its failures marked for {@link Failures#of} (see {@link Failures.NoCredentials}). */
    private static AwsCredentialsProvider failuresMarked(AwsCredentialsProvider provider) {
        return () -> {
            try {
                return provider.resolveCredentials();
            } catch (SdkClientException e) {
                throw SdkClientException.builder().message(e.getMessage()).cause(new Failures.NoCredentials(e)).build();
            }
        };
    }

    Sightings sightings() {
        return sightings;
    }

    Ticker ticker() {
        return ticker;
    }

    /** @return the client's first retry pause: the quickest a waiter in line polls */
    Duration retryBase() {
        return retryBase;
    }

    /** @return the client's longest retry pause */
    Duration retryCap() {
        return retryCap;
    }

    /** @return {@code FENCING} and {@code HOLDER_QUERY} */
    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    /**
     * @return 100 ms: a lease must outlast a few DynamoDB round trips to be renewable, and it is
     *     stored in whole milliseconds
     */
    @Override
    public Duration minimumLeaseTime() {
        return Duration.ofMillis(100);
    }

    /**
     * Starts an acquisition; no I/O.
     *
     * @param request the name, owner id and lease time
     * @return the attempt
     */
    @Override
    public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
        return new DynamoDbAttempt(this, request);
    }

    /**
     * What one acquire write found: a grant and its token, or the item that stood in the way (null
     * when the item was in a renewal transaction: held, with nothing learned about it).
     */
    record Outcome(boolean granted, long token, LockItem item) { }

    /** Which grant an acquire write makes, and so its condition. */
    enum GrantKind {
        /** The lock is free, or its holder's version is ripe, and nobody waits in line. */
        PLAIN,
        /**
         * The lock is free, or its holder's version is ripe, and this attempt's ticket is first in
         * line: the ticket leaves the line in the same write.
         */
        HEAD,
        /** The item names this owner already (a grant whose answer never came): granted again, with the next token. */
        AGAIN
    }

    /**
     * The acquire write: one conditional UpdateItem that sets the owner, a fresh record version and
     * the lease, and bumps the counter, if the grant's condition holds (see {@link GrantKind}); a
     * {@link GrantKind#HEAD} grant also removes the attempt's ticket from the head of the line.
     *
     * <p>Idempotent without an owner clause in the condition: an SDK retry of a write that was
     * applied but whose answer was lost fails its condition, and the item that comes back with the
     * failure names this owner with the very record version the write set, which only this write
     * can have set: that is the grant.
     *
     * @param request the acquisition
     * @param grant which grant
     * @param seenRvn a held version this client has seen unchanged for a whole lease time, or null
     *     (the lock must be free)
     * @param ticket this attempt's ticket ({@link GrantKind#HEAD} only)
     * @param deadline the {@link System#nanoTime()} reading by which the try this write is part of ends
     * @param interruptible whether the caller's interrupt ends the wait for the answer
     * @return the outcome
     * @throws LockBackendException if the outcome is unknown ({@link Failures.Interrupted} if the
     *     thread was interrupted)
     */
    Outcome acquire(AcquireRequest request, GrantKind grant, String seenRvn, String ticket, long deadline,
                    boolean interruptible) {
        String name = request.name();
        String rvn = newRvn();
        Map<String, AttributeValue> values = new HashMap<>();
        values.put(":me", AttributeValue.fromS(request.ownerId()));
        values.put(":rvn", AttributeValue.fromS(rvn));
        values.put(":l", AttributeValue.fromN(Long.toString(LeaseTimes.ceilMillis(request.leaseTime()))));
        values.put(":w", AttributeValue.fromS(clock.instant().toString()));
        values.put(":one", ONE);
        String condition;
        String updateExpression = ACQUIRE_UPDATE;
        Map<String, String> names;
        if (grant == GrantKind.AGAIN) {
            condition = HELD_BY_OWNER;
            names = names("#o", "#r", "#l", "#w", "#t");
        } else {
            String holder = "attribute_not_exists(#o)";
            if (seenRvn != null) {
                holder = "(" + holder + " OR #r = :seen)";
                values.put(":seen", AttributeValue.fromS(seenRvn));
            }
            if (grant == GrantKind.HEAD) {
                condition = holder + " AND #q[0] = :ticket";
                values.put(":ticket", AttributeValue.fromS(ticket));
                updateExpression = ACQUIRE_UPDATE + " REMOVE #q[0]";
            } else {
                condition = holder + " AND attribute_not_exists(#q[0])";
            }
            names = names("#o", "#r", "#l", "#w", "#t", "#q");
        }
        UpdateItemRequest update = UpdateItemRequest.builder()
                .tableName(settings.table)
                .key(key(name))
                .updateExpression(updateExpression)
                .conditionExpression(condition)
                .expressionAttributeNames(names)
                .expressionAttributeValues(values)
                .returnValues(ReturnValue.UPDATED_NEW)
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
                .overrideConfiguration(o -> timeouts(o, remaining(deadline)))
                .build();
        LockItem found;
        try {
            UpdateItemResponse response = calls.run("acquire", name, remaining(deadline), interruptible,
                    () -> client.updateItem(update));
            LockItem granted = item("acquire", name, response.attributes());
            if (!request.ownerId().equals(granted.owner()) || granted.token() <= 0) {
                throw new LockBackendException("the acquire of lock '" + name + "' on DynamoDB " + settings
                        + " got an answer without the new owner and token", name, null);
            }
            return new Outcome(true, granted.token(), granted);
        } catch (ConditionalCheckFailedException e) {
            // a server that does not return the item with the failed condition: ask for it
            found = e.hasItem() && !e.item().isEmpty() ? item("acquire", name, e.item())
                    : read(name, "acquire", deadline, interruptible);
        } catch (TransactionConflictException e) {
            // the item is in a renewal transaction (renewal=transaction) right now: it is held; nothing was written
            return new Outcome(false, 0, null);
        } catch (SdkException e) {
            throw failures.of("acquire", "UpdateItem", name, e);
        }
        if (request.ownerId().equals(found.owner()) && rvn.equals(found.rvn())) {
            return new Outcome(true, found.token(), found); // this write was applied; an SDK retry found it done
        }
        return new Outcome(false, 0, found);
    }

    /**
     * Puts a ticket at the end of the line, unless it is in line already (an SDK retry).
     *
     * @param name the lock
     * @param ticket the ticket
     * @param deadline the {@link System#nanoTime()} reading by which the try this write is part of ends
     * @param interruptible whether the caller's interrupt ends the wait for the answer
     * @return what the write found (not applied: the ticket was in line already, or the item was
     *     never granted); null when the item was in a renewal transaction and nothing was written
     * @throws LockBackendException if the outcome is unknown ({@link Failures.Interrupted} if the
     *     thread was interrupted)
     */
    QueueAnswer enqueue(String name, String ticket, long deadline, boolean interruptible) {
        Map<String, AttributeValue> values = new HashMap<>();
        values.put(":ticket", AttributeValue.fromS(ticket));
        values.put(":mine", AttributeValue.fromL(List.of(AttributeValue.fromS(ticket))));
        values.put(":empty", AttributeValue.fromL(List.of()));
        // only an item that was granted before: a lock never granted is free and needs no line
        return queueWrite("queueing for", name, "SET #q = list_append(if_not_exists(#q, :empty), :mine)",
                "attribute_exists(#r) AND NOT contains(#q, :ticket)", names("#q", "#r"), values, remaining(deadline),
                interruptible);
    }

    /**
     * Removes the first ticket in line if the item still has the record version and head seen:
     * the head left its turn unused for its ticket time.
     *
     * @param name the lock
     * @param rvn the record version seen
     * @param head the ticket seen first in line
     * @param deadline the {@link System#nanoTime()} reading by which the try this write is part of ends
     * @param interruptible whether the caller's interrupt ends the wait for the answer
     * @return what the write found; null when the item was in a renewal transaction and nothing
     *     was written
     * @throws LockBackendException if DynamoDB fails ({@link Failures.Interrupted} if the thread
     *     was interrupted)
     */
    QueueAnswer skip(String name, String rvn, String head, long deadline, boolean interruptible) {
        Map<String, AttributeValue> values = new HashMap<>();
        values.put(":seen", AttributeValue.fromS(rvn));
        values.put(":head", AttributeValue.fromS(head));
        QueueAnswer answer = queueWrite("skipping a waiter of", name, "REMOVE #q[0]", "#r = :seen AND #q[0] = :head",
                names("#q", "#r"), values, remaining(deadline), interruptible);
        if (answer != null && answer.applied()) {
            LOG.debug("dlock: skipped the waiter {} of lock '{}', which left its turn unused for its ticket time",
                    head, name);
        }
        return answer;
    }

    /**
     * Takes a ticket out of the line, wherever it is: the waiter gives up. Bounded by the
     * clean-up timeout; best-effort (a ticket left behind is skipped after its ticket time).
     *
     * @param name the lock
     * @param ticket the ticket
     * @param index where the ticket was last seen, or a negative number if unknown
     * @throws LockBackendException if DynamoDB fails
     */
    void dequeue(String name, String ticket, int index) {
        long deadline = Deadline.after(abandonTimeout).nanoTime();
        int at = index;
        for (int round = 0; round < 5 && deadline - System.nanoTime() > 0; round++) {
            if (at < 0) {
                at = read(name, "clean-up after a wait", remaining(deadline), false).queue().indexOf(ticket);
                if (at < 0) {
                    return;
                }
            }
            Map<String, AttributeValue> values = Map.of(":ticket", AttributeValue.fromS(ticket));
            String path = "#q[" + at + "]";
            QueueAnswer answer = queueWrite("clean-up after a wait", name, "REMOVE " + path, path + " = :ticket",
                    names("#q"), values, remaining(deadline), false);
            if (answer == null) {
                at = -1; // a renewal transaction held the item: look again
                continue;
            }
            if (answer.applied()) {
                return;
            }
            at = answer.item().queue().indexOf(ticket);
            if (at < 0) {
                return;
            }
            // the line moved on since the ticket was seen there: at is where it is now
        }
        LOG.debug("dlock: could not take the ticket {} out of the line of lock '{}'; it is skipped after its ticket "
                + "time", ticket, name);
    }

    /**
     * What a write on the line found.
     *
     * @param applied whether the condition held and the write was made
     * @param item the item after the write, or as it was when the condition failed
     */
    record QueueAnswer(boolean applied, LockItem item) { }

    /**
     * One conditional UpdateItem on the line.
     *
     * @return what it found, or null when the item was in a renewal transaction and nothing was written
     */
    private QueueAnswer queueWrite(String operation, String name, String updateExpression, String condition,
                                Map<String, String> names, Map<String, AttributeValue> values, Duration callTimeout,
                                boolean interruptible) {
        UpdateItemRequest update = UpdateItemRequest.builder()
                .tableName(settings.table)
                .key(key(name))
                .updateExpression(updateExpression)
                .conditionExpression(condition)
                .expressionAttributeNames(names)
                .expressionAttributeValues(values)
                .returnValues(ReturnValue.ALL_NEW)
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
                .overrideConfiguration(o -> timeouts(o, callTimeout))
                .build();
        try {
            UpdateItemResponse response = calls.run(operation, name, callTimeout, interruptible,
                    () -> client.updateItem(update));
            return new QueueAnswer(true, item(operation, name, response.attributes()));
        } catch (ConditionalCheckFailedException e) {
            return new QueueAnswer(false, e.hasItem() ? item(operation, name, e.item())
                    : read(name, operation, callTimeout, interruptible));
        } catch (TransactionConflictException e) {
            return null;
        } catch (SdkException e) {
            throw failures.of(operation, "UpdateItem", name, e);
        }
    }

    /**
     * Undoes a grant whose answer may have been lost: frees the lock if this owner holds it. Tries
     * once, within the clean-up timeout; if that fails, keeps trying in the background for the
     * lease time, after which other clients take the lock over anyway. Never throws.
     *
     * @param request the acquisition
     */
    void abandon(AcquireRequest request) {
        try {
            abandonOnce(request);
        } catch (LockBackendException e) {
            LOG.debug("dlock: could not undo a possible grant of lock '{}' yet; retrying in the background",
                    request.name(), e);
            if (e.retryable()) {
                cleaner.submit(request, () -> {
                    abandonOnce(request);
                    return RetryingCleaner.Outcome.DONE;
                }, request.leaseTime());
            }
        }
    }

    private void abandonOnce(AcquireRequest request) {
        String name = request.name();
        Map<String, AttributeValue> values = new HashMap<>();
        values.put(":me", AttributeValue.fromS(request.ownerId()));
        values.put(":rvn", AttributeValue.fromS(newRvn()));
        values.put(":w", AttributeValue.fromS(clock.instant().toString()));
        UpdateItemRequest update = UpdateItemRequest.builder()
                .tableName(settings.table)
                .key(key(name))
                .updateExpression(RELEASE_UPDATE)
                .conditionExpression(HELD_BY_OWNER)
                .expressionAttributeNames(names("#o", "#r", "#l", "#w"))
                .expressionAttributeValues(values)
                .overrideConfiguration(o -> o.apiCallTimeout(abandonTimeout).apiCallAttemptTimeout(abandonTimeout))
                .build();
        try {
            calls.run("clean-up after a failed acquire", name, abandonTimeout, false, () -> client.updateItem(update));
            LOG.debug("dlock: undid a grant of lock '{}' whose answer was lost", name);
        } catch (ConditionalCheckFailedException e) {
            // this owner does not hold it: nothing to undo
        } catch (SdkException e) {
            throw failures.of("clean-up after a failed acquire", "UpdateItem", name, e);
        }
    }

    /**
     * A strongly consistent read of a lock's item.
     *
     * @param name the lock
     * @param operation what it is for, for messages
     * @param deadline the {@link System#nanoTime()} reading by which the operation this read is
     *     part of ends
     * @param interruptible whether the caller's interrupt ends the wait for the answer
     * @return the item
     * @throws LockBackendException if DynamoDB fails or does not answer in time
     */
    LockItem read(String name, String operation, long deadline, boolean interruptible) {
        return read(name, operation, remaining(deadline), interruptible);
    }

    /**
     * The deadline of an operation that starts now: one operation timeout, shared by every
     * request the operation makes.
     *
     * @return a {@link System#nanoTime()} reading
     */
    long deadline() {
        return Deadline.after(timeout).nanoTime();
    }

    private LockItem read(String name, String operation, Duration callTimeout, boolean interruptible) {
        try {
            GetItemResponse response = calls.run(operation, name, callTimeout, interruptible, () -> client.getItem(b -> b
                    .tableName(settings.table).key(key(name)).consistentRead(true).projectionExpression(PROJECTION)
                    .expressionAttributeNames(names("#o", "#t", "#r", "#l", "#q"))
                    .overrideConfiguration(o -> timeouts(o, callTimeout))));
            return item(operation, name, response.item());
        } catch (SdkException e) {
            throw failures.of(operation, "GetItem", name, e);
        }
    }

    private LockItem item(String operation, String name, Map<String, AttributeValue> attributes) {
        try {
            return LockItem.of(attributes);
        } catch (IllegalStateException e) {
            throw failures.odd(operation, name, e);
        }
    }

    /**
     * Renews leases: one conditional UpdateItem per lease, several at once, or transactions of up
     * to 100 with single updates for the leases of a cancelled transaction; which one, the URI
     * parameter {@code renewal} says ({@code auto}, the default: transactions from 100 leases in one
     * call). Bounded by the operation timeout as a whole. A call that fails, or does not finish in
     * time, makes only its own leases' outcomes unknown: the others keep their answers.
     *
     * @param grants the grants
     * @return per grant, in order: renewed, not held, or unknown
     * @throws LockBackendException if the outcome of a single lease's renewal is unknown, or the
     *     thread is interrupted (flag kept)
     */
    @Override
    public List<RenewOutcome> renew(List<Grant<Void>> grants) {
        if (grants.isEmpty()) {
            return List.of();
        }
        if (grants.size() == 1) {
            Grant<Void> grant = grants.get(0);
            return List.of(outcome(calls.run("renewal", grant.name(), timeout, true, () -> renewOne(grant, timeout))));
        }
        String operation = "renewal of " + grants.size() + " leases";
        long deadline = deadline();
        RenewOutcome[] out = new RenewOutcome[grants.size()];
        List<Integer> singles = new ArrayList<>();
        if (transactionsAllowed && settings.renewal.byTransaction(grants.size())) {
            List<Callable<RenewOutcome[]>> transactions = new ArrayList<>();
            for (int from = 0; from < grants.size(); from += TRANSACTION_MAX) {
                int start = from;
                int end = Math.min(grants.size(), from + TRANSACTION_MAX);
                transactions.add(() -> renewByTransaction(grants, start, end, deadline));
            }
            List<Done<RenewOutcome[]>> settled = runEach(transactions, deadline, operation);
            for (int t = 0; t < settled.size(); t++) {
                int start = t * TRANSACTION_MAX;
                Done<RenewOutcome[]> done = settled.get(t);
                for (int k = 0; start + k < Math.min(grants.size(), start + TRANSACTION_MAX); k++) {
                    if (done.failure() != null) {
                        out[start + k] = RenewOutcome.unknown(done.failure());
                    } else if (done.value()[k] != null) {
                        out[start + k] = done.value()[k];
                    } else {
                        singles.add(start + k);
                    }
                }
            }
        } else {
            for (int i = 0; i < grants.size(); i++) {
                singles.add(i);
            }
        }
        if (!singles.isEmpty()) {
            List<Callable<Boolean>> updates = new ArrayList<>();
            for (int i : singles) {
                Grant<Void> grant = grants.get(i);
                updates.add(() -> renewOne(grant, remaining(deadline)));
            }
            List<Done<Boolean>> renewed = runEach(updates, deadline, operation);
            for (int k = 0; k < singles.size(); k++) {
                Done<Boolean> done = renewed.get(k);
                out[singles.get(k)] = done.failure() != null ? RenewOutcome.unknown(done.failure())
                        : outcome(done.value());
            }
        }
        return List.of(out);
    }

    private static RenewOutcome outcome(boolean renewed) {
        return renewed ? RenewOutcome.renewed() : RenewOutcome.notHeld();
    }

    private static Duration remaining(long deadline) {
        return Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(1), deadline - System.nanoTime()));
    }

    /**
     * Sets a request's timeouts: the whole call within {@code callTimeout}, each attempt within
     * half of it (at least 100 ms, unless the call has less), so the SDK can retry once in time.
     */
    private static void timeouts(AwsRequestOverrideConfiguration.Builder o, Duration callTimeout) {
        o.apiCallTimeout(callTimeout)
                .apiCallAttemptTimeout(max(callTimeout.dividedBy(2), min(callTimeout, Duration.ofMillis(100))));
    }

    /** Renews one lease with one conditional UpdateItem, on the calling thread (one of the backend's). */
    private boolean renewOne(Grant<Void> lock, Duration callTimeout) {
        String name = lock.name();
        try {
            client.updateItem(heldUpdate(lock, RENEW_UPDATE).toBuilder()
                    .overrideConfiguration(o -> timeouts(o, callTimeout))
                    .build());
            return true;
        } catch (ConditionalCheckFailedException e) {
            return false;
        } catch (SdkException e) {
            throw failures.of("renewal", "UpdateItem", name, e);
        }
    }

    /**
     * Renews {@code locks[start, end)} in one TransactWriteItems. Answers the outcome of each lease
     * it settled, indexed from {@code start}, and null for those it did not: a cancelled
     * transaction applies nothing, so the leases whose condition held are renewed again one by one.
     */
    private RenewOutcome[] renewByTransaction(List<Grant<Void>> locks, int start, int end, long deadline) {
        RenewOutcome[] out = new RenewOutcome[end - start];
        Set<String> distinct = new HashSet<>();
        for (int i = start; i < end; i++) {
            distinct.add(locks.get(i).name());
        }
        if (end - start < 2 || distinct.size() != end - start) {
            return out; // one lease is not worth a transaction; the same item twice is not allowed in one
        }
        List<TransactWriteItem> items = new ArrayList<>(end - start);
        for (int i = start; i < end; i++) {
            UpdateItemRequest u = heldUpdate(locks.get(i), RENEW_UPDATE);
            items.add(TransactWriteItem.builder().update(Update.builder()
                    .tableName(u.tableName()).key(u.key()).updateExpression(u.updateExpression())
                    .conditionExpression(u.conditionExpression()).expressionAttributeNames(u.expressionAttributeNames())
                    .expressionAttributeValues(u.expressionAttributeValues()).build()).build());
        }
        Duration callTimeout = remaining(deadline);
        try {
            client.transactWriteItems(b -> b.transactItems(items)
                    .overrideConfiguration(o -> o.apiCallTimeout(callTimeout)));
            java.util.Arrays.fill(out, RenewOutcome.renewed());
        } catch (TransactionCanceledException e) {
            List<CancellationReason> reasons = e.hasCancellationReasons() ? e.cancellationReasons() : List.of();
            for (int k = 0; k < out.length; k++) {
                String code = k < reasons.size() ? reasons.get(k).code() : null;
                if (CCF.equals(code)) {
                    out[k] = RenewOutcome.notHeld();
                }
                // otherwise not applied because another one failed, or a conflict: left null, tried alone
            }
        } catch (AwsServiceException e) {
            if (settings.renewal == DynamoDbSettings.Renewal.AUTO && isAccessDenied(e)) {
                // the default must not need a permission the single updates did not: renew one by one from now on
                transactionsAllowed = false;
                LOG.warn("dlock: DynamoDB {} denies dynamodb:TransactWriteItems; renewing leases one UpdateItem each "
                        + "from now on (grant the permission, or set renewal=update to silence this)", settings);
                return new RenewOutcome[end - start]; // all tried alone
            }
            throw failures.of("renewal of " + (end - start) + " leases", "TransactWriteItems", null, e);
        } catch (SdkException e) {
            throw failures.of("renewal of " + (end - start) + " leases", "TransactWriteItems", null, e);
        }
        return out;
    }

    private static boolean isAccessDenied(AwsServiceException e) {
        return e.awsErrorDetails() != null && "AccessDeniedException".equals(e.awsErrorDetails().errorCode());
    }

    /** A task's result, or why it has none (it failed, or did not finish in time). */
    private record Done<T>(T value, LockBackendException failure) { }

    /**
     * Runs tasks on the renewal threads (at most {@link #RENEW_PARALLELISM} at once, through the
     * support kit's {@link BoundedCalls}) and waits for each until the deadline: a task that fails
     * or is not done in time has a failure of its own, and the others keep their results. The wait
     * is interruptible: an interrupt throws, with the flag kept.
     */
    private <T> List<Done<T>> runEach(List<Callable<T>> tasks, long deadline, String operation) {
        List<CompletableFuture<T>> futures = new ArrayList<>(tasks.size());
        try {
            for (Callable<T> call : tasks) {
                futures.add(renewals.start(call, operation, null));
            }
            List<Done<T>> results = new ArrayList<>(tasks.size());
            for (CompletableFuture<T> f : futures) {
                try {
                    results.add(new Done<>(renewals.await(f, Deadline.at(deadline), BoundedCalls.OnInterrupt.ABORT,
                            operation, null), null));
                } catch (Failures.Interrupted e) {
                    throw e;
                } catch (LockBackendException e) {
                    results.add(new Done<>(null, e));
                }
            }
            return results;
        } finally {
            for (CompletableFuture<T> f : futures) {
                f.cancel(true);
            }
        }
    }

    /**
     * Releases a lease if its grant still holds the lock: removes the owner and keeps the counter.
     * A release that fails is retried in the background until the lease has ended.
     *
     * @param lock the grant
     * @return released, or not held if the grant no longer held the lock
     * @throws LockBackendException if the outcome is unknown
     */
    @Override
    public ReleaseOutcome release(Grant<Void> lock) {
        long deadline = deadline();
        try {
            for (long pause = 10; ; pause *= 2) {
                ReleaseOutcome outcome = releaseOnce(lock, remaining(deadline));
                if (outcome != null) {
                    return outcome;
                }
                // this client's own renewal transaction holds the item for a moment (renewal=transaction)
                if (deadline - System.nanoTime() <= TimeUnit.MILLISECONDS.toNanos(pause * 2)) {
                    throw new LockBackendException("the release of lock '" + lock.name() + "' on DynamoDB " + settings
                            + " met this client's renewal transaction until the operation timeout", lock.name(), null);
                }
                BoundedCalls.sleepUninterruptibly(Deadline.after(Duration.ofMillis(pause)));
            }
        } catch (LockBackendException e) {
            // conditional on owner and token, so safe to repeat: retried in the background until the
            // lease has ended (after which other clients take the lock over anyway)
            if (e.retryable()) {
                cleaner.submit(lock, () -> releaseOnce(lock, abandonTimeout) == null ? RetryingCleaner.Outcome.RETRY
                        : RetryingCleaner.Outcome.DONE, lock.leaseTime());
            }
            throw e;
        }
    }

    /** @return the outcome, or null if a renewal transaction of this client held the item */
    private ReleaseOutcome releaseOnce(Grant<Void> lock, Duration callTimeout) {
        UpdateItemRequest update = heldUpdate(lock, RELEASE_UPDATE).toBuilder()
                .overrideConfiguration(o -> timeouts(o, callTimeout)).build();
        try {
            // not interruptible: a thread that was interrupted and closes its lease must still free the lock
            calls.run("release", lock.name(), callTimeout, false, () -> client.updateItem(update));
            return ReleaseOutcome.RELEASED;
        } catch (ConditionalCheckFailedException e) {
            return ReleaseOutcome.NOT_HELD;
        } catch (TransactionConflictException e) {
            return null;
        } catch (SdkException e) {
            throw failures.of("release", "UpdateItem", lock.name(), e);
        }
    }

    /** An update conditional on the grant (owner and token) still holding the lock. */
    private UpdateItemRequest heldUpdate(Grant<Void> lock, String updateExpression) {
        boolean renew = updateExpression.equals(RENEW_UPDATE);
        Map<String, AttributeValue> values = new HashMap<>();
        values.put(":me", AttributeValue.fromS(lock.ownerId()));
        values.put(":tok", AttributeValue.fromN(Long.toString(lock.fencingToken())));
        values.put(":rvn", AttributeValue.fromS(newRvn()));
        values.put(":w", AttributeValue.fromS(clock.instant().toString()));
        if (renew) {
            values.put(":l", AttributeValue.fromN(Long.toString(LeaseTimes.ceilMillis(lock.leaseTime()))));
        }
        return UpdateItemRequest.builder()
                .tableName(settings.table)
                .key(key(lock.name()))
                .updateExpression(updateExpression)
                .conditionExpression(HELD_BY_GRANT)
                .expressionAttributeNames(names("#o", "#t", "#r", "#l", "#w"))
                .expressionAttributeValues(values)
                .build();
    }

    /**
     * Tells who holds a lock: the owner id and token in its item (a strongly consistent read). A
     * holder that stopped without releasing is named until another client takes the lock over.
     *
     * @param name the lock
     * @return the holder, or empty if the lock is free; the remaining lease time is unknown
     *     (DynamoDB keeps no time that clients could share)
     * @throws LockBackendException if DynamoDB fails or does not answer in time
     */
    @Override
    public Optional<LockHolder> holder(String name) {
        LockItem item = read(name, "holder query", deadline(), true);
        return item.free() ? Optional.empty() : Optional.of(new LockHolder(name, item.owner(), item.token(), null));
    }

    /** Closes the SDK client, its HTTP client and credentials, and stops the backend's threads. Never throws. */
    @Override
    public void close() {
        try {
            client.close();
        } catch (RuntimeException e) {
            LOG.debug("dlock: closing the DynamoDB client failed", e);
        }
        closeQuietly();
    }

    private void closeQuietly() {
        if (calls != null) {
            calls.close(); // first: a background try waiting for its call ends at once
        }
        if (cleaner != null) {
            cleaner.close();
        }
        try {
            http.close();
        } catch (RuntimeException e) {
            LOG.debug("dlock: closing the HTTP client failed", e);
        }
        if (credentials instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                LOG.debug("dlock: closing the credentials provider failed", e);
            }
        }
        if (renewals != null) {
            renewals.close();
        }
        sdkTimer.shutdownNow();
    }

    private static Map<String, AttributeValue> key(String name) {
        return Map.of(LockItem.NAME, AttributeValue.fromS(name));
    }

    private static Map<String, String> names(String... placeholders) {
        Map<String, String> names = new HashMap<>();
        for (String p : placeholders) {
            names.put(p, switch (p) {
                case "#o" -> LockItem.OWNER;
                case "#t" -> LockItem.TOKEN;
                case "#r" -> LockItem.RVN;
                case "#l" -> LockItem.LEASE;
                case "#w" -> LockItem.HOLDER_TIME;
                case "#q" -> LockItem.QUEUE;
                default -> throw new IllegalArgumentException(p);
            });
        }
        return names;
    }

    private static String newRvn() {
        return Ids.randomHex(16);
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    @Override
    public String toString() {
        return "DynamoDbLockBackend{" + settings + "}";
    }
}
