package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.Contender;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

/**
 * The floor on DynamoDB: the least a correct lock can send with the SDK. Acquire is one
 * {@code PutItem} on condition that the item does not exist, retried after 1 ms while it does;
 * release is one {@code DeleteItem} on condition that the owner is still this one. No lease
 * expiry, no renewal, no waiting, no token.
 */
public final class RawDynamoDbContender extends Floor implements Contender.OnOneServer {

    private static final String TABLE = "bench-raw";

    @Override
    public String name() {
        return "raw SDK v2 (floor)";
    }

    @Override
    public Session connect(InetSocketAddress server, Duration lease) {
        DynamoDbClient dynamo = LocalDynamoDb.client(server);
        try {
            dynamo.createTable(b -> b.tableName(TABLE)
                    .keySchema(KeySchemaElement.builder().attributeName("k").keyType(KeyType.HASH).build())
                    .attributeDefinitions(AttributeDefinition.builder().attributeName("k")
                            .attributeType(ScalarAttributeType.S).build())
                    .billingMode(BillingMode.PAY_PER_REQUEST));
        } catch (ResourceInUseException e) {
            // made by an earlier client
        }
        return new Session() {
            @Override
            public Held acquire(String key) throws InterruptedException {
                AttributeValue k = AttributeValue.fromS(key);
                AttributeValue owner = AttributeValue.fromS(UUID.randomUUID().toString());
                while (true) {
                    try {
                        dynamo.putItem(b -> b.tableName(TABLE).item(Map.of("k", k, "owner", owner))
                                .conditionExpression("attribute_not_exists(k)"));
                        return () -> dynamo.deleteItem(b -> b.tableName(TABLE).key(Map.of("k", k))
                                .conditionExpression("#o = :o")
                                .expressionAttributeNames(Map.of("#o", "owner"))
                                .expressionAttributeValues(Map.of(":o", owner)));
                    } catch (ConditionalCheckFailedException e) {
                        Thread.sleep(1);
                    }
                }
            }

            @Override
            public void close() {
                dynamo.close();
            }
        };
    }
}
