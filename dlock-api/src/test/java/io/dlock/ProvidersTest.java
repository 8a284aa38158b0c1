package io.dlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.internal.FakeProvider;
import io.dlock.internal.Providers;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Discovery through ServiceLoader: the test classpath registers only the {@code fake} scheme. */
class ProvidersTest {

    @Test
    void anUnknownSchemeFailsNamingTheSchemeAndWhatIsAvailable() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LockClient.open("nosuch://x"));
        String m = e.getMessage();
        assertTrue(m.startsWith("uri"), m);
        assertTrue(m.contains("'nosuch'"), m);
        assertTrue(m.contains("fake"), "the message lists the schemes found: " + m);
        assertTrue(m.contains("redis") && m.contains("etcd"), "the message lists the known schemes: " + m);
    }

    @Test
    void aKnownSchemeWithoutItsJarNamesTheJarToAdd() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LockClient.open("redis://localhost:6379"))
                .getMessage().contains("io.dlock:dlock-redis"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LockClient.open("zk://localhost:2181"))
                .getMessage().contains("io.dlock:dlock-zookeeper"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LockClient.open("etcd://h1:2379,h2:2379"))
                .getMessage().contains("io.dlock:dlock-etcd"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LockClient.open("dynamodb://t?region=x"))
                .getMessage().contains("io.dlock:dlock-dynamodb"));
    }

    @Test
    void theMessageForAMissingProviderNeverShowsThePassword() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LockClient.open("redis://user:hunter2@localhost:6379"));
        assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
    }

    @Test
    void aMalformedUriIsRejected() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LockClient.open("not a uri"))
                .getMessage().startsWith("uri"));
    }

    @Test
    void theSchemeIsFoundThroughServiceLoaderCaseInsensitively() {
        assertTrue(Providers.all().stream().anyMatch(p -> p instanceof FakeProvider));
        assertTrue(Providers.forUri("FAKE://x") instanceof FakeProvider);
        try (LockClient client = LockClient.open("fake://somewhere")) {
            assertNotNull(FakeProvider.lastOpened);
            assertEquals("fake://somewhere", client.config().uri());
            Lease lease = client.lock("a").tryAcquire().orElseThrow();
            assertTrue(lease.isValid());
            assertTrue(client.toString().contains("fake"));
        }
    }

    @Test
    void openReadsTheSystemPropertyWhenTheEnvironmentVariableIsUnset() {
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getenv("DLOCK_URI") == null, "DLOCK_URI is set here");
        String previous = System.getProperty("dlock.uri");
        try {
            System.clearProperty("dlock.uri");
            assertTrue(assertThrows(IllegalArgumentException.class, LockClient::open).getMessage().contains("DLOCK_URI"));
            System.setProperty("dlock.uri", "nosuch://x");
            assertTrue(assertThrows(IllegalArgumentException.class, LockClient::open).getMessage().contains("'nosuch'"));
            System.setProperty("dlock.uri", "fake://from-property");
            try (LockClient client = LockClient.open()) {
                assertEquals("fake://from-property", client.config().uri());
            }
        } finally {
            if (previous == null) {
                System.clearProperty("dlock.uri");
            } else {
                System.setProperty("dlock.uri", previous);
            }
        }
    }

    @Test
    void aMalformedUriWithAnExplicitProviderFailsWithoutLeakingThreads() throws InterruptedException {
        java.util.Set<Thread> before = io.dlock.internal.DlockThreads.alive();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LockClient.open(
                LockClientConfig.builder("fake://user:pw123@host:notaport").build(), new FakeProvider()));
        assertTrue(e.getMessage().startsWith("uri") && !e.getMessage().contains("pw123"), e.getMessage());
        io.dlock.internal.DlockThreads.assertNoneLeft(before);
    }

    @Test
    void aProviderThatCannotConnectFailsTheOpenWithoutLeakingThreads() throws InterruptedException {
        java.util.Set<Thread> before = io.dlock.internal.DlockThreads.alive();
        assertThrows(LockBackendException.class, () -> LockClient.open(
                LockClientConfig.builder("fake://x?failOpen").operationTimeout(Duration.ofSeconds(2)).build()));
        // the timer and worker the client started for itself are stopped again
        io.dlock.internal.DlockThreads.assertNoneLeft(before);
    }
}
