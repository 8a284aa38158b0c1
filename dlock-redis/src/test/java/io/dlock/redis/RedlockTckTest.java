package io.dlock.redis;

import io.dlock.tck.LockProviderTck;
import io.dlock.tck.TckFixture;

/** The compatibility kit against three real redis-servers as Redlock nodes. */
class RedlockTckTest extends LockProviderTck {

    @Override
    protected TckFixture createFixture() {
        return new RedlockFixture();
    }
}
