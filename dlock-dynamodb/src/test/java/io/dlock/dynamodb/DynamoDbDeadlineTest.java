package io.dlock.dynamodb;

import io.dlock.tck.OperationDeadline;
import org.junit.jupiter.api.Test;

/**
 * Every operation over a frozen network (a paused server, a stalled route) ends within the
 * operation timeout plus a margin ({@link OperationDeadline}), the clean-up after a failed acquire
 * included, and a client where nothing listens fails at once. Here that covers the SDK's call and
 * attempt timeouts, and the clean-up of a failed acquire's ticket.
 */
class DynamoDbDeadlineTest {

    @Test
    void operationsEndWithinTheOperationTimeoutAndARefusalAtOnce() throws Exception {
        try (DynamoDbFixture fixture = new DynamoDbFixture()) {
            OperationDeadline.check(fixture);
        }
    }
}
