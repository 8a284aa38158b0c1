package io.dlock.etcd;

import io.dlock.tck.LockProviderTck;
import io.dlock.tck.TckFixture;

/** The compatibility kit against a real etcd. */
class EtcdTckTest extends LockProviderTck {

    @Override
    protected TckFixture createFixture() {
        return new EtcdFixture();
    }
}
