package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.RequestCosts;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

/**
 * What one request of each kind the DynamoDB contenders send costs on the server at hand, one
 * after another on one item: the conditional writes of dlock (an UpdateItem that takes the lock,
 * bumps the counter and returns it; an UpdateItem that releases), of the AWS lock client and the
 * floor (a consistent GetItem, a conditional PutItem, a conditional DeleteItem). Explains a
 * latency ratio that differs from the ratio of request counts.
 */
public final class DynamoDbRequestCost {

    private static final String TABLE = "bench-request-cost";

    private DynamoDbRequestCost() { }

    /**
     * @param server DynamoDB (Local)
     * @param warmup time spent before measuring
     * @param measure time measured
     * @return the median time of each request kind, in µs, by name
     * @throws Exception if DynamoDB fails
     */
    public static Map<String, Double> measure(InetSocketAddress server, Duration warmup, Duration measure)
            throws Exception {
        try (DynamoDbClient d = LocalDynamoDb.client(server)) {
            try {
                d.createTable(b -> b.tableName(TABLE)
                        .keySchema(KeySchemaElement.builder().attributeName("k").keyType(KeyType.HASH).build())
                        .attributeDefinitions(AttributeDefinition.builder().attributeName("k")
                                .attributeType(ScalarAttributeType.S).build())
                        .billingMode(BillingMode.PAY_PER_REQUEST));
            } catch (ResourceInUseException e) {
                // an earlier fork made it
            }
            Map<String, AttributeValue> key = Map.of("k", AttributeValue.fromS("x"));
            Map<String, AttributeValue> me = Map.of(":me", AttributeValue.fromS("me"));
            Map<String, Callable<?>> requests = new LinkedHashMap<>();
            requests.put("PutItem if absent (AWS client, floor)", () -> d.putItem(b -> b.tableName(TABLE)
                    .item(Map.of("k", AttributeValue.fromS("x"), "o", AttributeValue.fromS("me")))
                    .conditionExpression("attribute_not_exists(k)")));
            requests.put("GetItem, consistent (AWS client)", () -> d.getItem(b -> b.tableName(TABLE).key(key)
                    .consistentRead(true)));
            requests.put("DeleteItem if owner (AWS client, floor)", () -> d.deleteItem(b -> b.tableName(TABLE).key(key)
                    .conditionExpression("o = :me").expressionAttributeValues(me)));
            requests.put("UpdateItem: take, bump counter, return it (dlock)", () -> d.updateItem(b -> b.tableName(TABLE)
                    .key(key).updateExpression("SET o = :me ADD t :one")
                    .conditionExpression("attribute_not_exists(o) OR o = :me")
                    .expressionAttributeValues(Map.of(":me", AttributeValue.fromS("me"), ":one", AttributeValue.fromN("1")))
                    .returnValues(ReturnValue.UPDATED_NEW)));
            requests.put("UpdateItem: release if owner (dlock)", () -> d.updateItem(b -> b.tableName(TABLE).key(key)
                    .updateExpression("REMOVE o").conditionExpression("o = :me").expressionAttributeValues(me)));
            return RequestCosts.medians(requests, () -> d.deleteItem(b -> b.tableName(TABLE).key(key)), warmup, measure);
        }
    }
}
