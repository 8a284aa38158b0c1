package io.dlock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.tck.ModulePath;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** dlock-redis on the module path: sealed, found through {@code provides}, and locking on a real Redis. */
class ModulePathTest {

    @Test
    void worksOnTheModulePath() {
        try (RedisServer redis = RedisServer.start()) {
            ModulePath.Result r = ModulePath.probe("io.dlock.redis", Set.of("io.dlock.redis"), redis.uri() + "?lockDelay=0");
            System.out.println(r.output());
            assertEquals(0, r.exitCode(), r.output());
            assertTrue(r.output().contains("acquired and released"), r.output());
        }
    }
}
