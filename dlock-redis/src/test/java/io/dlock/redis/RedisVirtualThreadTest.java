package io.dlock.redis;

import io.dlock.tck.VirtualThreadRun;
import org.junit.jupiter.api.Test;

/** {@value VirtualThreadRun#THREADS} virtual threads through one Redis client, on Java 21 or later. */
class RedisVirtualThreadTest {

    @Test
    void tenThousandVirtualThreadsOnAHundredLocks() throws Exception {
        try (RedisServer redis = RedisServer.start()) {
            VirtualThreadRun.check(redis.uri() + "?lockDelay=0");
        }
    }
}
