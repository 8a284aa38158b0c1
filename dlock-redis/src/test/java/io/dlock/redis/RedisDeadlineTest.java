package io.dlock.redis;

import io.dlock.tck.OperationDeadline;
import org.junit.jupiter.api.Test;

/**
 * Every operation over a frozen network (a paused server, a stalled route) ends within the
 * operation timeout plus a margin ({@link OperationDeadline}), the clean-up after a failed acquire
 * included, and a client where nothing listens fails at once. Here that covers the pool's borrow
 * and connect, the read, and the undo of an acquire whose answer never came.
 */
class RedisDeadlineTest {

    @Test
    void operationsEndWithinTheOperationTimeoutAndARefusalAtOnce() throws Exception {
        try (RedisFixture fixture = new RedisFixture(RedisFixture.FAULT_LOCK_DELAY)) {
            OperationDeadline.check(fixture);
        }
    }
}
