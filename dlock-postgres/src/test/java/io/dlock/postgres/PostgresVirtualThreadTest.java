package io.dlock.postgres;

import io.dlock.tck.VirtualThreadRun;
import org.junit.jupiter.api.Test;

/** {@value VirtualThreadRun#THREADS} virtual threads through one PostgreSQL client, on Java 21 or later. */
class PostgresVirtualThreadTest {

    @Test
    void tenThousandVirtualThreadsOnAHundredLocks() throws Exception {
        try (PostgresServer pg = PostgresServer.start()) {
            VirtualThreadRun.check(pg.uri(PostgresServer.SUPERUSER, PostgresServer.SUPERUSER_PASSWORD, "postgres"));
        }
    }
}
