package io.dlock.tck;

import io.dlock.tck.mem.MemFixture;

/** The reference provider passes every rule. */
class MemTckTest extends LockProviderTck {
    @Override
    protected TckFixture createFixture() {
        return new MemFixture();
    }
}
