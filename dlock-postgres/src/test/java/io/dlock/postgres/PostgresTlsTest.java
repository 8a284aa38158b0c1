package io.dlock.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.tck.ServerProcesses;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * TLS and password authentication against a real server with {@code ssl=on} (a self-signed
 * certificate for 127.0.0.1, made with {@code openssl}) and SCRAM: every TLS mode the URI offers
 * works where it should, an untrusted certificate is {@code TLS}, a wrong password over TLS is
 * {@code CREDENTIALS}, and {@code sslmode=require} against a server without TLS is {@code TLS}.
 */
class PostgresTlsTest {

    private static final Duration OP_TIMEOUT = Duration.ofSeconds(5);

    private static Path dir;
    private static Path cert;
    private static Path otherCert;
    private static PostgresServer tls;

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory("dlock-pg-tls-");
        cert = dir.resolve("cert.pem");
        Path key = dir.resolve("key.pem");
        otherCert = dir.resolve("other.pem");
        selfSigned(cert, key);
        selfSigned(otherCert, dir.resolve("other-key.pem"));
        tls = PostgresServer.startTls(cert, key);
        PostgresFixture.setUp(tls);
    }

    private static void selfSigned(Path certificate, Path key) throws IOException, InterruptedException {
        Process openssl = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                "-keyout", key.toString(), "-out", certificate.toString(), "-days", "2", "-subj", "/CN=dlock-test",
                "-addext", "subjectAltName=IP:127.0.0.1").redirectErrorStream(true)
                .redirectOutput(dir.resolve("openssl.log").toFile()).start();
        assertTrue(openssl.waitFor(60, TimeUnit.SECONDS) && openssl.exitValue() == 0,
                "openssl (installed by scripts/install-servers) could not make a test certificate");
    }

    @AfterAll
    static void stop() {
        if (tls != null) {
            tls.close();
        }
        if (dir != null) {
            ServerProcesses.deleteTree(dir);
        }
    }

    private static String uri(String password, String params) {
        return tls.uri(PostgresFixture.USER, password, PostgresFixture.DATABASE) + params;
    }

    private static long lockOnce(String uri) throws InterruptedException {
        try (LockClient c = LockClient.open(LockClientConfig.builder(uri).operationTimeout(OP_TIMEOUT).build())) {
            return c.lock("tls").tryAcquire(Duration.ofSeconds(5)).orElseThrow().fencingToken();
        }
    }

    private static LockBackendException failure(String uri) {
        try (LockClient c = LockClient.open(LockClientConfig.builder(uri).operationTimeout(OP_TIMEOUT).build())) {
            return assertThrows(LockBackendException.class, () -> c.lock("tls").tryAcquire());
        }
    }

    @Test
    void everyModeThatShouldWorkDoes() throws Exception {
        for (String params : new String[] {"", "?sslmode=prefer", "?sslmode=require", "?sslmode=allow",
                "?sslmode=verify-ca&sslrootcert=" + cert, "?sslmode=verify-full&sslrootcert=" + cert}) {
            assertTrue(lockOnce(uri(PostgresFixture.PASSWORD, params)) > 0, params);
        }
    }

    @Test
    void anUntrustedCertificateIsTls() {
        for (String mode : new String[] {"verify-ca", "verify-full"}) {
            LockBackendException e = failure(uri(PostgresFixture.PASSWORD, "?sslmode=" + mode + "&sslrootcert=" + otherCert));
            LockConfigurationException c = assertInstanceOf(LockConfigurationException.class, e, e.toString());
            assertEquals(Kind.TLS, c.kind(), e.getMessage());
        }
    }

    @Test
    void aWrongPasswordOverTlsIsCredentialsAndNotShown() {
        LockBackendException e = failure(uri("wrong-secret-pw", "?sslmode=require"));
        LockConfigurationException c = assertInstanceOf(LockConfigurationException.class, e, e.toString());
        assertEquals(Kind.CREDENTIALS, c.kind(), e.getMessage());
        assertFalse(e.getMessage().contains("wrong-secret-pw"), e.getMessage());
    }

    @Test
    void requiringTlsOfAServerWithoutItIsTls() {
        try (PostgresServer plain = PostgresServer.start()) {
            LockBackendException e = failure(plain.uri(PostgresServer.SUPERUSER, PostgresServer.SUPERUSER_PASSWORD,
                    "postgres") + "?sslmode=require");
            LockConfigurationException c = assertInstanceOf(LockConfigurationException.class, e, e.toString());
            assertEquals(Kind.TLS, c.kind(), e.getMessage());
            assertTrue(e.getMessage().contains("sslmode=require"), e.getMessage());
        }
    }
}
