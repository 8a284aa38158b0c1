package io.dlock.redis;

import io.dlock.tck.FaultToleranceTck;
import io.dlock.tck.TckFixture;

/** The fault tier against Redis Sentinel: pauses, kills and restarts, and a killed primary (S9). */
class RedisSentinelFaultTckTest extends FaultToleranceTck {

    @Override
    protected TckFixture createFixture() {
        return new RedisSentinelFixture(RedisFixture.FAULT_LOCK_DELAY);
    }
}
