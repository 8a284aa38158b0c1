package io.dlock.redis;

import io.dlock.tck.TestTiming;

import static io.dlock.tck.TestTiming.assertThrowsWithin;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.SSLSocketFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code rediss://} against a redis-server that speaks TLS, with a self-signed certificate made by
 * {@code openssl} for the address 127.0.0.1 only.
 */
class RedisTlsTest {

    private static final Duration FAIL_BOUND = Duration.ofMillis(2500);

    private static Path dir;
    private static RedisServer server;
    private static SSLSocketFactory trusting;

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory("dlock-redis-tls-");
        Path cert = TestSupport.selfSignedCertificate(dir);
        assumeTrue(cert != null, "openssl is needed to make the test certificate");
        server = RedisServer.startTls(cert, dir.resolve("key.pem"));
        trusting = TestSupport.trusting(cert);
        // a server just started has granted nothing: no lock-delay to wait out (see RedisServer)
        server.markLockDelayPassed(0, RedisServer.DEFAULT_PREFIX, trusting);
    }

    @AfterAll
    static void stop() throws IOException {
        if (server != null) {
            server.close();
        }
        if (dir != null) {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static LockClient open(String uri, RedisLockProvider provider) {
        return LockClient.open(LockClientConfig.builder(uri).operationTimeout(Duration.ofSeconds(1)).build(), provider);
    }

    @Test
    void tlsWithATrustedCertificateWorks() throws Exception {
        try (LockClient a = open(server.uri(), RedisLockProvider.withSslSocketFactory(trusting));
             LockClient b = open(server.uri(), RedisLockProvider.withSslSocketFactory(trusting))) {
            Lease lease = a.lock("tls").tryAcquire(Duration.ofSeconds(2)).orElseThrow();
            assertEquals(lease.fencingToken(), b.holder("tls").orElseThrow().fencingToken());
            // the waiter's pub/sub connection is TLS too
            var waiting = b.lock("tls").acquireAsync(Duration.ofSeconds(10));
            TestTiming.sleep(200);
            lease.release();
            Lease next = waiting.get(10, TimeUnit.SECONDS).orElseThrow();
            assertTrue(next.fencingToken() > lease.fencingToken());
            next.release();
        }
    }

    @Test
    void clusterModeOverTls() throws Exception {
        try (RedisClusterNodes cluster = RedisClusterNodes.startTls(dir.resolve("cert.pem"), dir.resolve("key.pem"),
                trusting)) {
            cluster.markLockDelayPassed(RedisServer.DEFAULT_PREFIX);
            String uri = "rediss-cluster://" + cluster.seeds();
            try (LockClient a = open(uri, RedisLockProvider.withSslSocketFactory(trusting));
                 LockClient b = open(uri, RedisLockProvider.withSslSocketFactory(trusting))) {
                // names on every primary; a waiter on another node hears the release (the bus carries it over TLS)
                for (String name : List.of("tls-a", "tls-b", "tls-c", "tls-d", "tls-e", "tls-f")) {
                    Lease lease = a.lock(name).tryAcquire(Duration.ofSeconds(2)).orElseThrow();
                    assertEquals(lease.fencingToken(), b.holder(name).orElseThrow().fencingToken());
                    var waiting = b.lock(name).acquireAsync(Duration.ofSeconds(10));
                    TestTiming.sleep(100);
                    lease.release();
                    Lease next = waiting.get(10, TimeUnit.SECONDS).orElseThrow();
                    assertTrue(next.fencingToken() > lease.fencingToken());
                    next.release();
                }
            }
            try (LockClient plain = open("redis-cluster://" + cluster.seeds(), new RedisLockProvider())) {
                LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                        () -> plain.lock("tls").tryAcquire());
                assertTrue(e.getMessage().contains("rediss"), e.getMessage());
            }
        }
    }

    @Test
    void theHostNameIsVerified() {
        // the certificate names 127.0.0.1 only
        String uri = "rediss://localhost:" + server.port();
        try (LockClient c = open(uri, RedisLockProvider.withSslSocketFactory(trusting))) {
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                    () -> c.lock("tls").tryAcquire(Duration.ofSeconds(5)));
            assertTrue(e.getMessage().contains("TLS"), e.getMessage());
            assertTls(e);
        }
    }

    @Test
    void anUntrustedCertificateIsRefused() {
        try (LockClient c = open(server.uri(), new RedisLockProvider())) {
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                    () -> c.lock("tls").tryAcquire(Duration.ofSeconds(5)));
            assertTrue(e.getMessage().contains("TLS"), e.getMessage());
            assertTls(e);
        }
    }

    @Test
    void plainRedisToATlsPortFailsInTime() {
        String uri = "redis://" + RedisServer.HOST + ":" + server.port();
        try (LockClient c = open(uri, new RedisLockProvider())) {
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                    () -> c.lock("tls").tryAcquire(Duration.ofSeconds(5)));
            System.out.println("[dlock-redis] plain client, TLS server: " + e);
        }
    }

    @Test
    void tlsToAPlainServerFailsInTime() {
        try (RedisServer plain = RedisServer.start();
             LockClient c = open("rediss://" + RedisServer.HOST + ":" + plain.port(),
                     RedisLockProvider.withSslSocketFactory(trusting))) {
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                    () -> c.lock("tls").tryAcquire(Duration.ofSeconds(5)));
            assertTrue(e.getMessage().contains("speaks TLS"), e.getMessage());
            // a plain Redis waits for the rest of what it takes for a command and never answers the
            // handshake, as a paused server would not: nothing tells the two apart, so it stays retryable
            assertTrue(e.retryable(), e.toString());
        }
    }

    private static void assertTls(LockBackendException e) {
        assertTrue(e instanceof LockConfigurationException, "not a configuration failure: " + e);
        assertEquals(Kind.TLS, ((LockConfigurationException) e).kind(), e.getMessage());
        assertFalse(e.retryable());
    }
}
