package io.dlock.zookeeper;

import io.dlock.tck.FaultToleranceTck;
import io.dlock.tck.TckFixture;

/** The fault tier against a real ZooKeeper server process: pauses, kills and restarts it. */
class ZooKeeperFaultTckTest extends FaultToleranceTck {

    @Override
    protected TckFixture createFixture() {
        return new ZooKeeperFixture();
    }
}
