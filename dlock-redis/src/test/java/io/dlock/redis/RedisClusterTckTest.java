package io.dlock.redis;

import io.dlock.tck.LockProviderTck;
import io.dlock.tck.TckFixture;

/** The compatibility kit against a Redis Cluster (3 primaries, 3 replicas). */
class RedisClusterTckTest extends LockProviderTck {

    @Override
    protected TckFixture createFixture() {
        return new RedisClusterFixture();
    }
}
