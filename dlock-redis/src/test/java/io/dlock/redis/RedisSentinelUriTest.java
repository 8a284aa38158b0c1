package io.dlock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Capability;
import io.dlock.spi.LockBackend;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@code redis-sentinel://} URIs: accepted with no I/O, rejected naming the part, never showing a password. */
class RedisSentinelUriTest {

    private static final String SECRET = "s3ntinel-s3cret";

    private static LockBackend<?> open(String uri) {
        return TestSupport.openBackend(uri, Duration.ofSeconds(1));
    }

    private static void assertRejected(String uri, String part) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> open(uri), uri);
        assertTrue(e.getMessage().contains(part), "'" + part + "' not named in: " + e.getMessage());
        assertFalse(e.getMessage().contains(SECRET), e.getMessage());
    }

    @Test
    void acceptsSentinelUrisWithoutConnecting() {
        // nothing listens on port 1: opening must not touch the sentinels
        for (String uri : new String[] {"redis-sentinel://127.0.0.1:1/mymaster",
                "rediss-sentinel://127.0.0.1:1,127.0.0.1:2/mymaster",
                "redis-sentinel://u:" + SECRET + "@127.0.0.1:1,localhost/mymaster?database=3&prefix=app:&poolSize=4"
                        + "&waitReplicas=1&lockDelay=PT5S&sentinelUser=s&sentinelPassword=" + SECRET,
                "redis-sentinel://127.0.0.1:1/mymaster?sentinelPassword=" + SECRET}) {
            LockBackend<?> b = open(uri);
            try {
                assertEquals(Set.of(Capability.FENCING, Capability.NOTIFY_WAITERS, Capability.HOLDER_QUERY,
                        Capability.SURVIVES_EMPTY_RESTART, Capability.SURVIVES_SERVER_FAILOVER), b.capabilities(), uri);
                assertFalse(b.toString().contains(SECRET), b.toString());
            } finally {
                b.close();
            }
        }
    }

    @Test
    void withoutTheLockDelayAFailoverIsNotSurvived() {
        LockBackend<?> b = open("redis-sentinel://127.0.0.1:1/mymaster?lockDelay=0");
        try {
            assertFalse(b.capabilities().contains(Capability.SURVIVES_SERVER_FAILOVER));
            assertFalse(b.capabilities().contains(Capability.SURVIVES_EMPTY_RESTART));
        } finally {
            b.close();
        }
    }

    @Test
    void rejectsBadSentinelUrisNamingThePart() {
        assertRejected("redis-sentinel://127.0.0.1:1", "master name");
        assertRejected("redis-sentinel://127.0.0.1:1/", "master name");
        assertRejected("redis-sentinel://127.0.0.1:1/a/b", "master name");
        assertRejected("redis-sentinel://127.0.0.1:1/m?database=x", "database");
        assertRejected("redis-sentinel://127.0.0.1:1/m?database=-1", "database");
        assertRejected("redis-sentinel://127.0.0.1:1/m?sentinelUser=s", "sentinelPassword");
        assertRejected("redis-sentinel://127.0.0.1:99999/m?sentinelPassword=" + SECRET, "port");
        assertRejected("redis-sentinel://127.0.0.1:1/m?poolSize=0&sentinelPassword=" + SECRET, "poolSize");
        assertRejected("redis-sentinel://127.0.0.1:1/m?bogus=1&sentinelPassword=" + SECRET, "bogus");
    }
}
