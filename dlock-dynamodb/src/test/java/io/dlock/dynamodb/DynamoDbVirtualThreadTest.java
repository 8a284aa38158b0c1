package io.dlock.dynamodb;

import io.dlock.tck.VirtualThreadRun;
import org.junit.jupiter.api.Test;

/** {@value VirtualThreadRun#THREADS} virtual threads through one DynamoDB (DynamoDB Local) client, on Java 21 or later. */
class DynamoDbVirtualThreadTest {

    @Test
    void tenThousandVirtualThreadsOnAHundredLocks() throws Exception {
        try (DynamoDbLocal server = DynamoDbLocal.start()) {
            VirtualThreadRun.check(TestSupport.uri(server, "virtual_threads"));
        }
    }
}
