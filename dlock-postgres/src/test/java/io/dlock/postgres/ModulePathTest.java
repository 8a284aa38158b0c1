package io.dlock.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.tck.ModulePath;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** dlock-postgres on the module path: sealed, found through {@code provides}, and locking on a real server. */
class ModulePathTest {

    @Test
    void worksOnTheModulePath() {
        try (PostgresServer pg = PostgresServer.start()) {
            ModulePath.Result r = ModulePath.probe("io.dlock.postgres", Set.of("io.dlock.postgres"),
                    pg.uri(PostgresServer.SUPERUSER, PostgresServer.SUPERUSER_PASSWORD, "postgres"));
            System.out.println(r.output());
            assertEquals(0, r.exitCode(), r.output());
            assertTrue(r.output().contains("acquired and released"), r.output());
        }
    }
}
