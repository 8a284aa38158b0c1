package io.dlock.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.tck.ModulePath;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** dlock-etcd on the module path: sealed, found through {@code provides}, and locking on a real etcd. */
class ModulePathTest {

    @Test
    void worksOnTheModulePath() {
        try (EtcdCluster etcd = EtcdCluster.start(1, null)) {
            ModulePath.Result r = ModulePath.probe("io.dlock.etcd", Set.of("io.dlock.etcd"), etcd.uri());
            System.out.println(r.output());
            assertEquals(0, r.exitCode(), r.output());
            assertTrue(r.output().contains("acquired and released"), r.output());
        }
    }
}
