package io.dlock.dynamodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.tck.ModulePath;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** dlock-dynamodb on the module path: sealed, found through {@code provides}, and locking on DynamoDB Local. */
class ModulePathTest {

    @Test
    void worksOnTheModulePath() {
        try (DynamoDbLocal server = DynamoDbLocal.start()) {
            ModulePath.Result r = ModulePath.probe("io.dlock.dynamodb", Set.of("io.dlock.dynamodb"),
                    TestSupport.uri(server, "module_path"));
            System.out.println(r.output());
            assertEquals(0, r.exitCode(), r.output());
            assertTrue(r.output().contains("acquired and released"), r.output());
        }
    }
}
