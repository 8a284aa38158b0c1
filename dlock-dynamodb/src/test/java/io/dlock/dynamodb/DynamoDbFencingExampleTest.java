package io.dlock.dynamodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.tck.TcpProxy;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

/**
 * docs/FENCING.md's DynamoDB example against DynamoDB Local: a condition expression on the item's
 * fence attribute refuses a stalled holder's stale write. The code between the {@code fencing:}
 * markers is quoted in docs/FENCING.md (held to it by dlock-postgres's FencingDocsTest).
 */
class DynamoDbFencingExampleTest {

    private static DynamoDbLocal server;

    @BeforeAll
    static void start() {
        server = DynamoDbLocal.start();
        try (DynamoDbClient db = server.sdkClient(Duration.ofSeconds(5))) {
            db.createTable(b -> b.tableName("orders").billingMode(BillingMode.PAY_PER_REQUEST)
                    .keySchema(k -> k.attributeName("id").keyType(KeyType.HASH))
                    .attributeDefinitions(a -> a.attributeName("id").attributeType(ScalarAttributeType.S)));
        }
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    // fencing:dynamodb-condition
    /** Writes the order's status unless a later lock holder has written it: true if the write was accepted. */
    static boolean writeFenced(DynamoDbClient db, String orderId, String status, long token) {
        try {
            db.updateItem(b -> b.tableName("orders")
                    .key(Map.of("id", AttributeValue.fromS(orderId)))
                    .updateExpression("SET #status = :status, fence = :token")
                    .conditionExpression("attribute_not_exists(fence) OR fence <= :token")
                    .expressionAttributeNames(Map.of("#status", "status"))
                    .expressionAttributeValues(Map.of(
                            ":status", AttributeValue.fromS(status),
                            ":token", AttributeValue.fromN(Long.toString(token)))));
            return true;
        } catch (ConditionalCheckFailedException e) {
            return false; // a holder with a later token wrote first
        }
    }
    // end fencing:dynamodb-condition

    /**
     * A holds the lock with token t1 and stalls (its link to DynamoDB is frozen, so it cannot
     * renew); its lease ends; B gets t2 and writes; A's write with t1 is refused by the condition.
     */
    @Test
    void theConditionExpressionRefusesAStalledHoldersWrite() throws Exception {
        LockOptions oneSecond = LockOptions.builder().leaseTime(Duration.ofSeconds(1)).build();
        String table = TestSupport.newTable("fencing");
        String uri = TestSupport.uri(server, table);
        try (TcpProxy proxy = TcpProxy.start(server.address());
             LockClient a = TestSupport.client(DynamoDbFixture.uri(table, DynamoDbLocal.HOST + ":"
                     + proxy.address().getPort()) + "&createTable=true");
             LockClient b = TestSupport.client(uri);
             DynamoDbClient db = server.sdkClient(Duration.ofSeconds(5))) {
            Lease leaseA = a.lock("order-7", oneSecond).tryAcquire().orElseThrow();
            long t1 = leaseA.fencingToken();
            proxy.freeze(); // A stalls: no renewal reaches DynamoDB
            Lease leaseB = b.lock("order-7", oneSecond).tryAcquire(Duration.ofSeconds(30)).orElseThrow();
            long t2 = leaseB.fencingToken();
            assertTrue(t2 > t1);
            assertTrue(writeFenced(db, "order-7", "shipped by B", t2), "B's write");
            assertTrue(writeFenced(db, "order-7", "delivered by B", t2), "B's second write with the same token");
            assertFalse(writeFenced(db, "order-7", "cancelled by A", t1), "A's stale write must be refused");
            assertEquals("delivered by B", db.getItem(g -> g.tableName("orders").consistentRead(true)
                    .key(Map.of("id", AttributeValue.fromS("order-7")))).item().get("status").s());
            leaseB.release();
            proxy.unfreeze();
        }
    }
}
