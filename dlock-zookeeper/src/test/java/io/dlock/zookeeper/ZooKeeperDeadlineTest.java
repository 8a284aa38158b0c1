package io.dlock.zookeeper;

import io.dlock.tck.OperationDeadline;
import org.junit.jupiter.api.Test;

/**
 * Every operation over a frozen network (a paused server, a stalled route) ends within the
 * operation timeout plus a margin ({@link OperationDeadline}), the clean-up after a failed acquire
 * included, and a client where nothing listens fails at once. Here that covers the background
 * calls' waits, and the delete of an abandoned attempt's node.
 */
class ZooKeeperDeadlineTest {

    @Test
    void operationsEndWithinTheOperationTimeoutAndARefusalAtOnce() throws Exception {
        try (ZooKeeperFixture fixture = new ZooKeeperFixture()) {
            OperationDeadline.check(fixture);
        }
    }
}
