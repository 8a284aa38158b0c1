package io.dlock.zookeeper;

import io.dlock.tck.FaultToleranceTck;
import io.dlock.tck.TckFixture;

/** The fault tier against a three-member ensemble: S9 (leader killed) and the randomized run with leader kills. */
class ZooKeeperClusterFaultTckTest extends FaultToleranceTck {

    @Override
    protected TckFixture createFixture() {
        return new ZooKeeperClusterFixture();
    }
}
