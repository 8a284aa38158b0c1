package io.dlock.redis;

import io.dlock.tck.FaultToleranceTck;
import io.dlock.tck.TckFixture;

/** The fault tier against three Redlock nodes: pauses, kills and restarts them, all or one at a time. */
class RedlockFaultTckTest extends FaultToleranceTck {

    @Override
    protected TckFixture createFixture() {
        return new RedlockFixture(RedisFixture.FAULT_LOCK_DELAY);
    }
}
