package io.dlock.redis;

import io.dlock.tck.FaultToleranceTck;
import io.dlock.tck.TckFixture;

/** The fault tier against a Redis Cluster: pauses, kills and restarts its nodes, and fails a primary over (S9). */
class RedisClusterFaultTckTest extends FaultToleranceTck {

    @Override
    protected TckFixture createFixture() {
        return new RedisClusterFixture(RedisFixture.FAULT_LOCK_DELAY);
    }
}
