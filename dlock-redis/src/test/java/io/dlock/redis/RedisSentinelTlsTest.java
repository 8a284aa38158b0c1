package io.dlock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockConfigurationException;
import io.dlock.LockOptions;
import io.dlock.tck.ServerProcesses;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code rediss-sentinel://}: sentinels and data nodes that speak only TLS (replication and the
 * sentinels' links too), with a self-signed certificate for 127.0.0.1 made by {@code openssl}.
 */
class RedisSentinelTlsTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final LockOptions SHORT = LockOptions.builder().leaseTime(Duration.ofMillis(500)).build();

    private static Path dir;
    private static RedisSentinelGroup group;
    private static SSLSocketFactory trusting;

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory("dlock-redis-sentinel-tls-");
        Path cert = dir.resolve("cert.pem");
        Path key = dir.resolve("key.pem");
        boolean made;
        try {
            Process openssl = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                    "-keyout", key.toString(), "-out", cert.toString(), "-days", "2", "-subj", "/CN=dlock-test",
                    "-addext", "subjectAltName=IP:127.0.0.1").redirectErrorStream(true)
                    .redirectOutput(dir.resolve("openssl.log").toFile()).start();
            made = openssl.waitFor(60, TimeUnit.SECONDS) && openssl.exitValue() == 0;
        } catch (IOException e) {
            made = false;
        }
        assumeTrue(made, "openssl is needed to make the test certificate");
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(cert)) {
            trust.setCertificateEntry("dlock-test", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(null, tmf.getTrustManagers(), null);
        trusting = ssl.getSocketFactory();
        group = RedisSentinelGroup.startTls(cert, key, trusting);
    }

    @AfterAll
    static void stop() {
        if (group != null) {
            group.close();
        }
        if (dir != null) {
            ServerProcesses.deleteTree(dir);
        }
    }

    private static LockClient open(String uri, RedisLockProvider provider) {
        return LockClient.open(LockClientConfig.builder(uri).operationTimeout(Duration.ofSeconds(1)).build(), provider);
    }

    /** Locks over TLS, and still after a failover (the new primary is found and spoken to over TLS). */
    @Test
    void locksOverTlsAndFollowsAFailover() throws Exception {
        String uri = group.uri() + "?lockDelay=PT1S";
        assertTrue(uri.startsWith("rediss-sentinel://"), uri);
        try (LockClient c = open(uri, RedisLockProvider.withSslSocketFactory(trusting))) {
            Lease before = c.lock("tls", SHORT).tryAcquire(PATIENCE).orElseThrow();
            long token = before.fencingToken();
            before.release();
            group.failover();
            Lease after = c.lock("tls", SHORT).tryAcquire(PATIENCE).orElseThrow();
            assertTrue(after.fencingToken() > token, after.fencingToken() + " after " + token);
            after.release();
        }
    }

    /** The JVM's default trust does not know the self-signed certificate: a TLS configuration error. */
    @Test
    void anUntrustedCertificateIsATlsError() {
        try (LockClient c = open(group.uri(), new RedisLockProvider())) {
            LockConfigurationException e = assertThrows(LockConfigurationException.class,
                    () -> c.lock("tls", SHORT).tryAcquire());
            assertEquals(LockConfigurationException.Kind.TLS, e.kind(), e.getMessage());
        }
    }
}
