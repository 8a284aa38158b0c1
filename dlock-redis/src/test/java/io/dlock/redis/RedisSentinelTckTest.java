package io.dlock.redis;

import io.dlock.tck.LockProviderTck;
import io.dlock.tck.TckFixture;

/** The compatibility kit against Redis Sentinel: a primary found and followed through three sentinels. */
class RedisSentinelTckTest extends LockProviderTck {

    @Override
    protected TckFixture createFixture() {
        return new RedisSentinelFixture();
    }
}
