package io.dlock.etcd;

import io.dlock.tck.TestTiming;

import static io.dlock.tck.TestTiming.assertThrowsWithin;
import static io.dlock.etcd.TestSupport.name;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.LockOptions;
import io.etcd.jetcd.Auth;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.auth.Permission;
import io.grpc.netty.GrpcSslContexts;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * TLS and authentication against a real etcd that serves clients only over TLS, with a certificate
 * from a throw-away CA, and has authentication enabled: a user {@code dlock} whose role may read
 * and write {@code dlock/...}, and a user {@code reader} who may only read it. A wrong password, a
 * role without write access and an untrusted certificate are {@link LockConfigurationException}s of
 * their kind; an unreachable server, and a server that closes the connection on a client that
 * speaks TLS or not where it should not, are retryable.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EtcdTlsAuthTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    /** Characters that need percent-encoding in a URI, to prove they are decoded. */
    private static final String PASSWORD = "s3cr3t:p@ss/w%rd";
    private static final String WRONG = "not-the-Password-42";

    private TestCerts certs;
    private EtcdCluster etcd;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @BeforeAll
    void start() throws Exception {
        certs = TestCerts.generate();
        etcd = EtcdCluster.start(1, certs.serverTls());
        try (Client root = Client.builder().endpoints(etcd.member(0).clientUrl())
                .sslContext(GrpcSslContexts.forClient().trustManager(certs.caCert.toFile()).build()).build()) {
            Auth auth = root.getAuthClient();
            auth.userAdd(bs("root"), bs("root-pw")).get(30, TimeUnit.SECONDS);
            auth.roleAdd(bs("root")).get(10, TimeUnit.SECONDS);
            auth.userGrantRole(bs("root"), bs("root")).get(10, TimeUnit.SECONDS);
            auth.userAdd(bs("dlock"), bs(PASSWORD)).get(10, TimeUnit.SECONDS);
            auth.roleAdd(bs("dlock")).get(10, TimeUnit.SECONDS);
            auth.roleGrantPermission(bs("dlock"), bs("dlock/"), bs("dlock0"), Permission.Type.READWRITE)
                    .get(10, TimeUnit.SECONDS);
            auth.userGrantRole(bs("dlock"), bs("dlock")).get(10, TimeUnit.SECONDS);
            auth.userAdd(bs("reader"), bs("reader-pw")).get(10, TimeUnit.SECONDS);
            auth.roleAdd(bs("reader")).get(10, TimeUnit.SECONDS);
            auth.roleGrantPermission(bs("reader"), bs("dlock/"), bs("dlock0"), Permission.Type.READ)
                    .get(10, TimeUnit.SECONDS);
            auth.userGrantRole(bs("reader"), bs("reader")).get(10, TimeUnit.SECONDS);
            auth.authEnable().get(10, TimeUnit.SECONDS);
        }
    }

    @AfterEach
    void closeClients() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        toClose.clear();
    }

    @AfterAll
    void stop() {
        if (etcd != null) {
            etcd.close();
        }
        if (certs != null) {
            certs.close();
        }
    }

    private static ByteSequence bs(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    private String uri(String user, String password, boolean caFile) {
        return "etcds://" + user + ":" + URLEncoder.encode(password, StandardCharsets.UTF_8) + "@127.0.0.1:"
                + etcd.member(0).clientPort + (caFile ? "?caFile=" + URLEncoder.encode(certs.caCert.toString(),
                StandardCharsets.UTF_8) : "");
    }

    private LockClientConfig.Builder config(String uri) {
        return LockClientConfig.builder(uri).operationTimeout(TIMEOUT)
                .defaultLockOptions(LockOptions.builder().leaseTime(Duration.ofSeconds(2)).build())
                .retry(Duration.ofMillis(10), Duration.ofMillis(250));
    }

    private LockClient open(LockClientConfig.Builder config) {
        LockClient c = LockClient.open(config.build());
        toClose.add(c);
        return c;
    }

    @Test
    void locksWorkOverTlsWithAPasswordAndACaFile() throws Exception {
        LockClient a = open(config(uri("dlock", PASSWORD, true)));
        LockClient b = open(config(uri("dlock", PASSWORD, true)));
        String name = name("tls");
        Lease held = a.lock(name).tryAcquire().orElseThrow();
        assertTrue(b.lock(name).tryAcquire().isEmpty(), "held");
        assertEquals(held.ownerId(), b.holder(name).orElseThrow().ownerId());
        // a waiter's watch works with the auth token too
        CompletableFuture<Optional<Lease>> waiting = b.lock(name).acquireAsync(Duration.ofSeconds(20));
        TestTiming.sleep(1000); // renewals and the waiter's watch run for a while under auth
        assertTrue(held.isValid(), "renewed under auth");
        held.release();
        Lease next = waiting.get(10, TimeUnit.SECONDS).orElseThrow();
        assertTrue(next.fencingToken() > held.fencingToken());
        next.release();
        assertFalse(a.toString().contains(PASSWORD), a.toString());
    }

    @Test
    void theProviderTakesATrustManagerFactory() {
        LockClient c = LockClient.open(config(uri("dlock", PASSWORD, false)).build(),
                EtcdLockProvider.withTrustManagerFactory(certs.trust()));
        toClose.add(c);
        c.lock(name("tmf")).tryAcquire().orElseThrow().release();
    }

    @Test
    void aWrongPasswordFailsInTimeWithoutShowingAnyPassword() {
        LockClient c = open(config(uri("dlock", WRONG, true)));
        LockBackendException e = assertThrowsWithin(LockBackendException.class, TIMEOUT.plusMillis(1500),
                () -> c.lock(name("wrong")).tryAcquire(Duration.ofSeconds(5)));
        String all = messages(e);
        System.out.println("[dlock-etcd] wrong password: " + e.getMessage());
        assertTrue(all.toLowerCase().contains("authentication failed") || all.contains("UNAUTHENTICATED"), all);
        assertConfiguration(Kind.CREDENTIALS, e);
        assertTrue(e.getMessage().contains("check the user and password"), e.getMessage());
        assertFalse(all.contains(WRONG), "the wrong password shows: " + all);
        assertFalse(all.contains(PASSWORD), "the password shows: " + all);
        assertFalse(c.toString().contains(WRONG), c.toString());
    }

    @Test
    void aUserWhoMayOnlyReadCannotTakeALock() {
        LockClient c = open(config(uri("reader", "reader-pw", true)));
        LockBackendException e = assertThrowsWithin(LockBackendException.class, TIMEOUT.plusMillis(1500),
                () -> c.lock(name("reader")).tryAcquire());
        System.out.println("[dlock-etcd] read-only user: " + e.getMessage());
        assertTrue(messages(e).contains("permission denied"), messages(e));
        assertConfiguration(Kind.PERMISSION, e);
        assertTrue(e.getMessage().contains("roles need read and write access"), e.getMessage());
        assertTrue(c.holder(name("reader-holder")).isEmpty(), "reading is allowed");
    }

    @Test
    void anUntrustedServerCertificateFailsInTime() {
        // neither caFile nor a trust manager: the JVM's default trust does not know the test CA
        LockClient c = open(config(uri("dlock", PASSWORD, false)));
        LockBackendException e = assertThrowsWithin(LockBackendException.class, TIMEOUT.plusMillis(1500),
                () -> c.lock(name("untrusted")).tryAcquire(Duration.ofSeconds(5)));
        System.out.println("[dlock-etcd] untrusted certificate: " + e.getMessage());
        assertFalse(messages(e).contains(PASSWORD), messages(e));
        assertConfiguration(Kind.TLS, e);
    }

    @Test
    void aTlsClientCannotTalkToAPlainServer() {
        try (EtcdCluster plain = EtcdCluster.single()) {
            LockClient c = open(config("etcds://127.0.0.1:" + plain.member(0).clientPort + "?caFile="
                    + URLEncoder.encode(certs.caCert.toString(), StandardCharsets.UTF_8)));
            LockBackendException e = assertThrowsWithin(LockBackendException.class, TIMEOUT.plusMillis(1500),
                    () -> c.lock(name("tls-to-plain")).tryAcquire(Duration.ofSeconds(5)));
            System.out.println("[dlock-etcd] TLS client, plain server: " + e.getMessage());
            // the plain server closes the connection during the handshake without a word, as a restarting
            // one may: nothing typed tells the two apart, so it stays retryable, with a hint
            assertTrue(e.retryable(), e.toString());
            assertTrue(e.getMessage().contains("check that the servers speak TLS"), e.getMessage());
            c.close();
        }
    }

    @Test
    void anUnreachableServerIsATransientFailure() {
        LockClient c = open(config("etcds://dlock:" + URLEncoder.encode(PASSWORD, StandardCharsets.UTF_8) + "@127.0.0.1:"
                + EtcdCluster.freePort() + "?caFile=" + URLEncoder.encode(certs.caCert.toString(), StandardCharsets.UTF_8)));
        LockBackendException e = assertThrowsWithin(LockBackendException.class, TIMEOUT.plusMillis(1500),
                () -> c.lock(name("nowhere")).tryAcquire(Duration.ofSeconds(5)));
        assertFalse(e instanceof LockConfigurationException, e.toString());
        assertTrue(e.retryable(), e.toString());
    }

    @Test
    void aPlainClientCannotTalkToATlsServer() {
        LockClient c = open(config("etcd://dlock:" + URLEncoder.encode(PASSWORD, StandardCharsets.UTF_8) + "@127.0.0.1:"
                + etcd.member(0).clientPort));
        LockBackendException e = assertThrowsWithin(LockBackendException.class, TIMEOUT.plusMillis(1500),
                () -> c.lock(name("plain")).tryAcquire(Duration.ofSeconds(5)));
        System.out.println("[dlock-etcd] plain client, TLS server: " + e.getMessage());
        assertFalse(messages(e).contains(PASSWORD), messages(e));
        // the server closes the connection without a word, as a restarting one may: only a hint says TLS
        assertTrue(e.retryable(), e.toString());
        assertTrue(e.getMessage().contains("use etcds://"), e.getMessage());
    }

    private static void assertConfiguration(Kind kind, LockBackendException e) {
        assertTrue(e instanceof LockConfigurationException, "not a configuration failure: " + messages(e));
        assertEquals(kind, ((LockConfigurationException) e).kind(), e.getMessage());
        assertFalse(e.retryable());
    }

    private static String messages(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            b.append(c).append(" | ");
        }
        return b.toString();
    }
}
