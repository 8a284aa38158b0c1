package io.dlock.dynamodb.internal;

import io.dlock.LockBackendException;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.spi.support.Deadline;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;

/**
 * {@code createTable=true}: makes sure the lock table exists with dlock's key, creating it
 * (on-demand capacity, partition key {@code name} of type String) if it does not, and waits until
 * it can be used, at most {@link #READY_TIMEOUT}. Each call is bounded by the operation timeout.
 */
final class TableSetup {

    /** The longest wait for a new table to become active; DynamoDB usually needs a few seconds. */
    static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

    private final DynamoDbClient client;
    private final Calls calls;
    private final DynamoDbSettings settings;
    private final Failures failures;
    private final Duration timeout;

    TableSetup(DynamoDbClient client, Calls calls, DynamoDbSettings settings, Failures failures, Duration timeout) {
        this.client = client;
        this.calls = calls;
        this.settings = settings;
        this.failures = failures;
        this.timeout = timeout;
    }

    /**
     * Finds or creates the table and waits until it is usable.
     *
     * @throws LockBackendException if it cannot, naming the table and, for a missing permission,
     *     the action
     */
    void ensureTable() {
        long deadline = Deadline.after(timeout).nanoTime() + READY_TIMEOUT.toNanos();
        TableDescription table = describe();
        if (table == null) {
            try {
                table = calls.run("table creation", null, timeout, true, () -> client.createTable(b -> b
                        .tableName(settings.table)
                        .keySchema(KeySchemaElement.builder().attributeName(LockItem.NAME).keyType(KeyType.HASH).build())
                        .attributeDefinitions(AttributeDefinition.builder().attributeName(LockItem.NAME)
                                .attributeType(ScalarAttributeType.S).build())
                        .billingMode(BillingMode.PAY_PER_REQUEST)).tableDescription());
            } catch (ResourceInUseException e) {
                table = null; // another client created it meanwhile
            } catch (SdkException e) {
                throw failures.of("table creation", "CreateTable", null, e);
            }
        }
        long pause = 100;
        while (table == null || !usable(table)) {
            if (System.nanoTime() - deadline >= 0) {
                throw new LockBackendException("DynamoDB " + settings + " did not become ACTIVE within " + READY_TIMEOUT
                        + " (status " + (table == null ? "unknown" : table.tableStatusAsString()) + ")", null, null);
            }
            try {
                TimeUnit.MILLISECONDS.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Failures.Interrupted("waiting for DynamoDB " + settings + " to become ACTIVE was interrupted",
                        null, e);
            }
            pause = Math.min(1000, pause * 2);
            table = describe();
        }
        checkKey(table);
    }

    private static boolean usable(TableDescription table) {
        return table.tableStatus() == TableStatus.ACTIVE || table.tableStatus() == TableStatus.UPDATING;
    }

    /** @return the table, or null if it does not exist */
    private TableDescription describe() {
        try {
            return calls.run("table check", null, timeout, true,
                    () -> client.describeTable(b -> b.tableName(settings.table)).table());
        } catch (ResourceNotFoundException e) {
            return null;
        } catch (SdkException e) {
            throw failures.of("table check", "DescribeTable", null, e);
        }
    }

    private void checkKey(TableDescription table) {
        List<KeySchemaElement> key = table.keySchema();
        boolean ok = key.size() == 1 && key.get(0).attributeName().equals(LockItem.NAME)
                && key.get(0).keyType() == KeyType.HASH
                && table.attributeDefinitions().stream().anyMatch(d -> d.attributeName().equals(LockItem.NAME)
                        && d.attributeType() == ScalarAttributeType.S);
        if (!ok) {
            throw new LockConfigurationException(Kind.INCOMPATIBLE_SERVER, "DynamoDB " + settings
                    + " exists but its key is " + key
                    + "; dlock needs a partition key named '" + LockItem.NAME + "' of type String and no sort key: "
                    + "use another table name", null, null);
        }
    }
}
