package io.dlock.zookeeper;

import io.dlock.tck.LockProviderTck;
import io.dlock.tck.TckFixture;

/** The ZooKeeper backend against the compatibility kit. */
class ZooKeeperTckTest extends LockProviderTck {
    @Override
    protected TckFixture createFixture() {
        return new ZooKeeperFixture();
    }
}
