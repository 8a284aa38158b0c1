package io.dlock.postgres;

import io.dlock.tck.LockProviderTck;
import io.dlock.tck.TckFixture;

/** The compatibility kit against a real PostgreSQL server. */
class PostgresTckTest extends LockProviderTck {

    @Override
    protected TckFixture createFixture() {
        return new PostgresFixture();
    }
}
