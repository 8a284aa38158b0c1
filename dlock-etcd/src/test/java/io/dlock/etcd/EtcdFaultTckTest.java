package io.dlock.etcd;

import io.dlock.tck.FaultToleranceTck;
import io.dlock.tck.TckFixture;

/** The fault tier against a real 3-member etcd cluster: pauses, kills and restarts it, kills its leader. */
class EtcdFaultTckTest extends FaultToleranceTck {

    @Override
    protected TckFixture createFixture() {
        return new EtcdClusterFixture();
    }
}
