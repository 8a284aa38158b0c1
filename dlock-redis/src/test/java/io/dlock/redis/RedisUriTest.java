package io.dlock.redis;

import static io.dlock.tck.SpiAnswers.*;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Capability;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendUri;
import io.dlock.spi.LockBackend;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** URI parsing: what is accepted (with no I/O), and what is rejected naming the part, never the password. */
class RedisUriTest {

    private static final String SECRET = "t0p-s3cret";

    private static LockBackend<?> open(String uri) {
        return TestSupport.openBackend(uri, Duration.ofSeconds(1));
    }

    private static void assertRejected(String uri, String part) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> open(uri), uri);
        assertTrue(e.getMessage().contains(part), "'" + part + "' not named in: " + e.getMessage());
        assertFalse(e.getMessage().contains(SECRET), e.getMessage());
    }

    /**
     * A timeout too long to count in nanoseconds (300 years) opens a backend: every budget
     * saturates. Before, opening threw ArithmeticException (long overflow).
     */
    @Test
    void aHugeOperationTimeoutSaturatesInsteadOfOverflowing() {
        TestSupport.openBackend("redis://127.0.0.1:1", Duration.ofDays(365L * 300)).close();
    }

    @Test
    void providerNamesItsSchemes() {
        RedisLockProvider p = new RedisLockProvider();
        assertEquals("redis", p.name());
        assertEquals(Set.of("redis", "rediss", "redis-sentinel", "rediss-sentinel", "redis-cluster", "rediss-cluster",
                "redlock", "redlocks"), p.schemes());
    }

    @Test
    void acceptsRedisAndRedissWithoutConnecting() {
        // nothing listens on port 1: opening must not touch the server
        for (String uri : new String[] {"redis://127.0.0.1:1", "rediss://127.0.0.1:1", "redis://localhost",
                "redis://u:" + SECRET + "@127.0.0.1:1/15?prefix=app:&poolSize=4&waitReplicas=1", "redis://:" + SECRET + "@[::1]:1/",
                "REDIS://127.0.0.1:1"}) {
            LockBackend<?> b = open(uri);
            try {
                assertEquals(Set.of(Capability.FENCING, Capability.NOTIFY_WAITERS, Capability.HOLDER_QUERY,
                        Capability.SURVIVES_EMPTY_RESTART), b.capabilities());
                assertFalse(b.toString().contains(SECRET), b.toString());
            } finally {
                b.close();
            }
        }
    }

    @Test
    void theLockDelayIsTheLongestLeaseAndZeroTurnsItOff() {
        LockBackend<?> b = open("redis://127.0.0.1:1");
        try {
            assertEquals(Duration.ofSeconds(30), b.maximumLeaseTime(), "default: the default lease time");
        } finally {
            b.close();
        }
        // a client whose default lease is longer gets a lock-delay that long, so that its defaults work
        LockClientConfig longer = LockClientConfig.builder("redis://127.0.0.1:1")
                .defaultLockOptions(io.dlock.LockOptions.builder().leaseTime(Duration.ofMinutes(2)).build()).build();
        b = new RedisLockProvider().open(new BackendContext(longer, BackendUri.parse(longer.uri()), Thread::new,
                TestSupport.NO_EVENTS));
        try {
            assertEquals(Duration.ofMinutes(2), b.maximumLeaseTime());
        } finally {
            b.close();
        }
        for (String[] c : new String[][] {{"lockDelay=PT45S", "PT45S"}, {"lockDelay=2500", "PT2.5S"},
            {"lockDelay=pt10m", "PT10M"}, {"lockDelay=PT0.01S", "PT0.01S"}}) {
            b = open("redis://127.0.0.1:1?" + c[0]);
            try {
                assertEquals(Duration.parse(c[1]), b.maximumLeaseTime(), c[0]);
                assertTrue(b.capabilities().contains(Capability.SURVIVES_EMPTY_RESTART), c[0]);
            } finally {
                b.close();
            }
        }
        for (String off : new String[] {"lockDelay=0", "lockDelay=PT0S"}) {
            b = open("redis://127.0.0.1:1?" + off);
            try {
                assertEquals(Set.of(Capability.FENCING, Capability.NOTIFY_WAITERS, Capability.HOLDER_QUERY),
                        b.capabilities(), off);
                assertEquals(Duration.ofDays(365), b.maximumLeaseTime(), off);
            } finally {
                b.close();
            }
        }
        try (LockClient c = LockClient.open(LockClientConfig.builder("redis://127.0.0.1:1?lockDelay=PT5S").build())) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.lock("x",
                    io.dlock.LockOptions.builder().leaseTime(Duration.ofSeconds(6)).build()));
            assertTrue(e.getMessage().contains("leaseTime"), e.getMessage());
        }
    }

    @Test
    void rejectsBadPartsNamingThem() {
        assertRejected("redis://", "host");
        assertRejected("redis://h1:6379,h2:6379", "host");
        assertRejected("redis://127.0.0.1:0", "port");
        assertRejected("redis://u:" + SECRET + "@127.0.0.1:6379/x", "database");
        assertRejected("redis://u:" + SECRET + "@127.0.0.1:6379/-1", "database");
        assertRejected("redis://u:" + SECRET + "@127.0.0.1:6379/1/2", "database");
        assertRejected("redis://u:" + SECRET + "@127.0.0.1:6379?prefix=", "prefix");
        assertRejected("redis://u:" + SECRET + "@127.0.0.1:6379?poolSize=0", "poolSize");
        assertRejected("redis://u:" + SECRET + "@127.0.0.1:6379?poolSize=many", "poolSize");
        assertRejected("redis://u:" + SECRET + "@127.0.0.1:6379?prefx=a", "prefx");
        assertRejected("redis://u:" + SECRET + "@127.0.0.1:6379?waitReplicas=-1", "waitReplicas");
        assertRejected("redis://u:" + SECRET + "@127.0.0.1:6379?waitReplicas=all", "waitReplicas");
        assertRejected("redis://u:" + SECRET + "@127.0.0.1:6379?lockDelay=30s", "lockDelay");
        assertRejected("redis://u:" + SECRET + "@127.0.0.1:6379?lockDelay=-PT1S", "lockDelay");
        assertRejected("redis://u:" + SECRET + "@127.0.0.1:6379?lockDelay=PT0.005S", "lockDelay");
        assertRejected("redis://u:" + SECRET + "@127.0.0.1:6379?lockDelay=PT8761H", "lockDelay");
        assertRejected("redis://alice@127.0.0.1:6379", "user");
        assertRejected("redis://alice:@127.0.0.1:6379", "password");
        assertRejected("memcached://127.0.0.1:6379", "scheme");
    }

    @Test
    void aPasswordInTheUserSlotIsRejectedWithoutBeingShown() {
        // redis://PASSWORD@host: the user info has no ':', so its one part is the user name
        for (String userInfo : new String[] {SECRET, "x" + SECRET + "/y", SECRET + "?x", "a," + SECRET}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> open("redis://" + userInfo + "@127.0.0.1:6379"));
            assertTrue(e.getMessage().contains("no ':'"), e.getMessage());
            assertTrue(e.getMessage().contains("redis://:PASSWORD@host"), e.getMessage());
            assertFalse(e.getMessage().contains(SECRET), e.getMessage());
        }
        // the user name is user info too: not shown by a message about another part, nor by toString
        assertRejected("redis://" + SECRET + ":pw@127.0.0.1:6379/x", "database");
        LockBackend<?> b = open("redis://" + SECRET + ":pw@127.0.0.1:1");
        try {
            assertFalse(b.toString().contains(SECRET), b.toString());
        } finally {
            b.close();
        }
    }

    @Test
    void malformedPortIsRejectedByTheClientWithoutThePassword() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LockClient.open("redis://u:" + SECRET + "@127.0.0.1:port"));
        assertTrue(e.getMessage().contains("port"), e.getMessage());
        assertFalse(e.getMessage().contains(SECRET), e.getMessage());
    }

    @Test
    void explicitProviderWorksWithoutServiceLoader() {
        LockClientConfig config = LockClientConfig.builder("rediss://127.0.0.1:1").build();
        try (LockClient c = LockClient.open(config, new RedisLockProvider())) {
            assertTrue(c.capabilities().contains(Capability.FENCING));
        }
        assertThrows(IllegalArgumentException.class, () -> RedisLockProvider.withSslSocketFactory(null));
    }

    @Test
    void backendContextFromTheSpiIsEnough() {
        LockClientConfig config = LockClientConfig.builder("redis://127.0.0.1:1").build();
        LockBackend<?> b = new RedisLockProvider().open(new BackendContext(config, BackendUri.parse(config.uri()),
                Thread::new, TestSupport.NO_EVENTS));
        b.close();
        b.close(); // idempotent
        assertEquals(Duration.ofMillis(10), b.minimumLeaseTime());
    }
}
