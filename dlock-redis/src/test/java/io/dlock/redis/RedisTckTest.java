package io.dlock.redis;

import io.dlock.tck.LockProviderTck;
import io.dlock.tck.TckFixture;

/** The compatibility kit against a real redis-server. */
class RedisTckTest extends LockProviderTck {

    @Override
    protected TckFixture createFixture() {
        return new RedisFixture();
    }
}
