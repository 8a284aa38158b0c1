package io.dlock.bench.internal.peers;

import com.amazonaws.services.dynamodbv2.AcquireLockOptions;
import com.amazonaws.services.dynamodbv2.AmazonDynamoDBLockClient;
import com.amazonaws.services.dynamodbv2.AmazonDynamoDBLockClientOptions;
import com.amazonaws.services.dynamodbv2.CreateDynamoDBTableOptions;
import com.amazonaws.services.dynamodbv2.LockItem;
import io.dlock.bench.internal.Contender;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughput;

/**
 * The Amazon DynamoDB Lock Client ({@code amazon-dynamodb-lock-client}), lease at the benchmark's
 * lease time, its heartbeat thread renewing every third of it, and a waiter that polls every
 * 20 ms (its default, 1 s, would make every hand-off about a second).
 */
public final class AwsLockClientContender implements Contender.OnOneServer {

    private static final String TABLE = "bench-aws-lock-client";

    @Override
    public String name() {
        return "AWS DynamoDB Lock Client";
    }

    @Override
    public Session connect(InetSocketAddress server, Duration lease) {
        DynamoDbClient dynamo = LocalDynamoDb.client(server);
        AmazonDynamoDBLockClient locks = new AmazonDynamoDBLockClient(
                AmazonDynamoDBLockClientOptions.builder(dynamo, TABLE)
                        .withTimeUnit(TimeUnit.MILLISECONDS)
                        .withLeaseDuration(lease.toMillis())
                        .withHeartbeatPeriod(lease.toMillis() / 3)
                        .withCreateHeartbeatBackgroundThread(true)
                        .build());
        synchronized (AwsLockClientContender.class) {
            if (!locks.lockTableExists()) {
                AmazonDynamoDBLockClient.createLockTableInDynamoDB(CreateDynamoDBTableOptions.builder(dynamo,
                        ProvisionedThroughput.builder().readCapacityUnits(10_000L).writeCapacityUnits(10_000L).build(),
                        TABLE).build());
            }
        }
        return new Session() {
            @Override
            public Held acquire(String key) throws InterruptedException {
                LockItem item = locks.acquireLock(AcquireLockOptions.builder(key)
                        .withTimeUnit(TimeUnit.MILLISECONDS)
                        .withRefreshPeriod(20L)
                        .withAdditionalTimeToWaitForLock(TimeUnit.MINUTES.toMillis(5))
                        .build());
                return () -> {
                    if (!locks.releaseLock(item)) {
                        throw new IllegalStateException("the lock " + key + " was no longer this client's at its release");
                    }
                };
            }

            @Override
            public void close() {
                try {
                    locks.close();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } finally {
                    dynamo.close();
                }
            }
        };
    }
}
