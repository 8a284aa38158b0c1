package io.dlock.postgres;

import io.dlock.tck.FaultToleranceTck;
import io.dlock.tck.TckFixture;

/** The fault tier against a real PostgreSQL server: frozen and broken links, pauses, kills and restarts. */
class PostgresFaultTckTest extends FaultToleranceTck {

    @Override
    protected TckFixture createFixture() {
        return new PostgresFixture();
    }
}
