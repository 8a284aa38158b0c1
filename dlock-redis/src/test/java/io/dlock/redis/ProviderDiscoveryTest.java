package io.dlock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Capability;
import io.dlock.LockClient;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/** ServiceLoader discovery with dlock-redis on the classpath (and, as a test dependency, dlock-tck). */
class ProviderDiscoveryTest {

    @Test
    void redisUrisFindThisProvider() {
        for (String uri : new String[] {"redis://127.0.0.1:1", "rediss://127.0.0.1:1"}) {
            try (LockClient c = LockClient.open(uri)) {
                // the lock-delay is on by default, and with it the claim to survive an empty restart
                assertEquals(EnumSet.of(Capability.FENCING, Capability.NOTIFY_WAITERS, Capability.HOLDER_QUERY,
                        Capability.SURVIVES_EMPTY_RESTART), c.capabilities());
                assertTrue(c.toString().contains("redis"), c.toString());
            }
            try (LockClient c = LockClient.open(uri + "?lockDelay=0")) {
                assertEquals(EnumSet.of(Capability.FENCING, Capability.NOTIFY_WAITERS, Capability.HOLDER_QUERY),
                        c.capabilities(), "without the lock-delay, no claim to survive an empty restart");
            }
        }
    }

    @Test
    void aMissingProviderNamesTheSchemesFoundAndTheJarToAdd() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LockClient.open("etcd://127.0.0.1:2379"));
        String m = e.getMessage();
        assertTrue(m.contains("'etcd'"), m);
        assertTrue(m.contains("redis") && m.contains("rediss"), "the schemes found are named: " + m);
        assertTrue(m.contains("io.dlock:dlock-etcd"), "the jar to add is named: " + m);
    }
}
