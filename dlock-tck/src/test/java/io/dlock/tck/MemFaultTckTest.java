package io.dlock.tck;

import io.dlock.tck.mem.MemFixture;

/** The reference provider under the fault tier. */
class MemFaultTckTest extends FaultToleranceTck {
    @Override
    protected TckFixture createFixture() {
        return new MemFixture();
    }
}
