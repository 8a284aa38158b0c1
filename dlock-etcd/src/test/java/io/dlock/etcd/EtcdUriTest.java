package io.dlock.etcd;

import static io.dlock.tck.SpiAnswers.*;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Capability;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import io.dlock.spi.LockBackend;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** URI parsing: what is accepted (with no I/O), and what is rejected naming the part, never the password. */
class EtcdUriTest {

    private static final String SECRET = "t0p-s3cret";
    private static final Set<Capability> CAPABILITIES = EnumSet.of(Capability.FENCING, Capability.NOTIFY_WAITERS,
            Capability.FAIR, Capability.HOLDER_QUERY, Capability.SURVIVES_SERVER_FAILOVER);

    private static LockBackend<?> open(String uri) {
        return TestSupport.openBackend(uri, Duration.ofSeconds(1), new TestSupport.RecordingEvents());
    }

    private static void assertRejected(String uri, String part) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> open(uri).close(), uri);
        assertTrue(e.getMessage().contains(part), "'" + part + "' not named in: " + e.getMessage());
        assertFalse(e.getMessage().contains(SECRET), e.getMessage());
    }

    /**
     * A timeout too long to count in nanoseconds (300 years) opens a backend: every deadline
     * saturates. Before, opening threw ArithmeticException (long overflow) from the hedge delay.
     */
    @Test
    void aHugeOperationTimeoutSaturatesInsteadOfOverflowing() {
        for (Duration huge : new Duration[] {Duration.ofDays(365L * 300), Duration.ofSeconds(Long.MAX_VALUE)}) {
            TestSupport.openBackend("etcd://127.0.0.1:1", huge, new TestSupport.RecordingEvents()).close();
        }
    }

    @Test
    void providerNamesItsSchemes() {
        EtcdLockProvider p = new EtcdLockProvider();
        assertEquals("etcd", p.name());
        assertEquals(Set.of("etcd", "etcds"), p.schemes());
    }

    @Test
    void acceptsEtcdAndEtcdsWithoutConnecting() throws Exception {
        try (TestCerts certs = TestCerts.generate()) {
            Path ca = certs.caCert;
            // nothing listens on port 1: opening must not touch the server
            for (String uri : new String[] {"etcd://127.0.0.1:1", "etcds://127.0.0.1:1", "etcd://localhost",
                    "etcd://h1:1,h2:2,h3", "etcd://u:" + SECRET + "@127.0.0.1:1,127.0.0.1:2?prefix=app/",
                    "etcd://[::1]:1", "ETCD://127.0.0.1:1/", "etcds://u:" + SECRET + "@127.0.0.1:1?caFile=" + ca}) {
                var b = open(uri);
                try {
                    assertEquals(CAPABILITIES, b.capabilities());
                    assertEquals(Duration.ofSeconds(2), b.minimumLeaseTime());
                    assertFalse(b.toString().contains(SECRET), b.toString());
                } finally {
                    b.close();
                    b.close(); // idempotent
                }
            }
        }
    }

    @Test
    void rejectsBadPartsNamingThem() throws Exception {
        assertRejected("etcd://", "host");
        assertRejected("etcd://127.0.0.1:0", "port");
        assertRejected("etcd://u:" + SECRET + "@127.0.0.1:2379/dlock", "path");
        assertRejected("etcd://u:" + SECRET + "@127.0.0.1:2379?prefix=", "prefix");
        assertRejected("etcd://u:" + SECRET + "@127.0.0.1:2379?prefx=a", "prefx");
        assertRejected("etcd://u:" + SECRET + "@127.0.0.1:2379?caFile=/etc/hosts", "caFile");
        assertRejected("etcds://u:" + SECRET + "@127.0.0.1:2379?caFile=/no/such/file.pem", "caFile");
        assertRejected("etcds://u:" + SECRET + "@127.0.0.1:2379?certFile=/etc/hosts", "keyFile");
        Path junk = Files.createTempFile("dlock-etcd-not-a-cert", ".pem");
        try {
            Files.writeString(junk, "not a certificate");
            assertRejected("etcds://u:" + SECRET + "@127.0.0.1:2379?caFile=" + junk, "caFile");
        } finally {
            Files.delete(junk);
        }
        assertRejected("etcd://alice@127.0.0.1:2379", "user");
        // a password in the user slot, some with characters that would end the host: never shown
        assertRejected("etcd://" + SECRET + "@127.0.0.1:2379", "no ':'");
        assertRejected("etcd://x" + SECRET + "/y@127.0.0.1:2379", "no ':'");
        assertRejected("etcd://" + SECRET + "?x@127.0.0.1:2379", "no ':'");
        assertRejected("etcd://" + SECRET + ":pw@127.0.0.1:2379/dlock", "path");
        assertRejected("etcd://alice:@127.0.0.1:2379", "password");
        assertRejected("etcd://:" + SECRET + "@127.0.0.1:2379", "user");
        assertRejected("zookeeper://127.0.0.1:2181", "scheme");
    }

    @Test
    void leaseTimesBelowTwoSecondsAreRejected() {
        try (LockClient c = LockClient.open("etcd://127.0.0.1:1")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> c.lock("x", LockOptions.builder().leaseTime(Duration.ofMillis(1999)).build()));
            assertTrue(e.getMessage().contains("leaseTime") && e.getMessage().contains("PT2S"), e.getMessage());
            c.lock("x", LockOptions.builder().leaseTime(Duration.ofSeconds(2)).build());
        }
    }

    @Test
    void etcdUrisFindThisProviderThroughTheServiceLoader() {
        for (String uri : new String[] {"etcd://127.0.0.1:1", "etcds://127.0.0.1:1,127.0.0.1:2"}) {
            try (LockClient c = LockClient.open(uri)) {
                assertEquals(CAPABILITIES, c.capabilities());
                assertTrue(c.toString().contains("etcd"), c.toString());
            }
        }
    }

    @Test
    void explicitProviderWorksWithoutServiceLoader() {
        LockClientConfig config = LockClientConfig.builder("etcd://127.0.0.1:1").build();
        try (LockClient c = LockClient.open(config, new EtcdLockProvider())) {
            assertTrue(c.capabilities().contains(Capability.FENCING));
        }
        assertThrows(IllegalArgumentException.class, () -> EtcdLockProvider.withTrustManagerFactory(null));
    }

    @Test
    void theClientNeverShowsThePassword() {
        try (LockClient c = LockClient.open("etcd://u:" + SECRET + "@127.0.0.1:1")) {
            assertFalse(c.toString().contains(SECRET), c.toString());
            assertFalse(c.config().toString().contains(SECRET), c.config().toString());
        }
    }
}
