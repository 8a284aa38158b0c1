package io.dlock.redis;

import io.dlock.tck.FaultToleranceTck;
import io.dlock.tck.TckFixture;

/** The fault tier against a real redis-server: pauses, kills and restarts it. */
class RedisFaultTckTest extends FaultToleranceTck {

    @Override
    protected TckFixture createFixture() {
        return new RedisFixture(RedisFixture.FAULT_LOCK_DELAY);
    }
}
