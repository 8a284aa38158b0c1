package io.dlock.redis;

import io.dlock.tck.TestTiming;

import static io.dlock.tck.TestTiming.assertThrowsWithin;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.tck.SpiAnswers;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Credentials against a redis-server with {@code requirepass} and ACL users: the right ones work,
 * wrong or missing ones fail with a {@link LockConfigurationException} of kind
 * {@code CREDENTIALS}, users the ACL denies keys, scripts or channels with kind {@code PERMISSION},
 * and the password never shows in a message, a {@code toString()} or a stack trace.
 */
class RedisAuthTest {

    private static final String PASSWORD = "Sup3r-Secret-pw";
    private static final String ALICE_PASSWORD = "al!ce p@ss:w/rd%";
    private static final Duration FAIL_BOUND = Duration.ofMillis(2500);

    private static RedisServer server;

    @BeforeAll
    static void start() {
        server = RedisServer.start(List.of("--requirepass", PASSWORD,
                "--user", "alice", "on", ">" + ALICE_PASSWORD, "~*", "&*", "+@all",
                // may touch only other keys than dlock's
                "--user", "bob", "on", ">bob-pw", "~other:*", "&*", "+@all",
                // may not run scripts
                "--user", "carol", "on", ">carol-pw", "~*", "&*", "+@all", "-eval", "-evalsha",
                // may not publish (Redis 7's default for a new user): acquires work, releases do not
                "--user", "dan", "on", ">dan-pw", "~*", "resetchannels", "+@all"));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static String uri(String userInfo) {
        return "redis://" + userInfo + "@" + RedisServer.HOST + ":" + server.port();
    }

    private static LockClient open(String uri) {
        return LockClient.open(LockClientConfig.builder(uri).operationTimeout(Duration.ofSeconds(1)).build());
    }

    private static void assertWorks(String uri) throws InterruptedException {
        try (LockClient c = open(uri)) {
            Lease lease = c.lock("auth").tryAcquire(Duration.ofSeconds(2)).orElseThrow();
            assertEquals(lease.ownerId(), c.holder("auth").orElseThrow().ownerId());
            lease.release();
        }
    }

    private static String everything(Throwable e) {
        StringWriter w = new StringWriter();
        e.printStackTrace(new PrintWriter(w));
        return w.toString();
    }

    @Test
    void rightPasswordWorks() throws Exception {
        assertWorks(uri(":" + PASSWORD));
        assertWorks(uri("default:" + PASSWORD));
    }

    @Test
    void aclUserWithAPercentEncodedPasswordWorks() throws Exception {
        assertWorks(uri("alice:" + URLEncoder.encode(ALICE_PASSWORD, StandardCharsets.UTF_8).replace("+", "%20")));
    }

    @Test
    void wrongPasswordFailsWithoutShowingIt() {
        String wrong = "Wr0ng-Secret-pw";
        try (LockClient c = open(uri(":" + wrong))) {
            assertFalse(c.toString().contains(wrong), c.toString());
            assertFalse(c.config().toString().contains(wrong), c.config().toString());
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                    () -> c.lock("auth").tryAcquire(Duration.ofSeconds(5)));
            assertTrue(e.getMessage().contains("rejected the credentials"), e.getMessage());
            assertTrue(e.getMessage().contains("check the user and password"), e.getMessage());
            assertConfiguration(Kind.CREDENTIALS, e);
            assertFalse(everything(e).contains(wrong), everything(e));
            assertFalse(everything(e).contains(PASSWORD));
        }
        try (LockClient c = open(uri("alice:" + wrong))) {
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND, () -> c.holder("auth"));
            assertTrue(e.getMessage().contains("rejected the credentials"), e.getMessage());
            assertConfiguration(Kind.CREDENTIALS, e);
            assertFalse(everything(e).contains(wrong), everything(e));
            assertFalse(everything(e).contains("alice"), "the user name shown: " + everything(e));
        }
    }

    @Test
    void missingPasswordSaysAuthenticationIsRequired() {
        try (LockClient c = open("redis://" + RedisServer.HOST + ":" + server.port())) {
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                    () -> c.lock("auth").tryAcquire(Duration.ofSeconds(5)));
            assertTrue(e.getMessage().contains("requires authentication"), e.getMessage());
            assertConfiguration(Kind.CREDENTIALS, e);
        }
    }

    @Test
    void usersTheAclDeniesKeysOrScriptsAreRefusedForLackOfPermission() {
        try (LockClient keys = open(uri("bob:bob-pw")); LockClient scripts = open(uri("carol:carol-pw"))) {
            LockBackendException e = acquireFails(keys);
            assertConfiguration(Kind.PERMISSION, e);
            assertTrue(e.getMessage().contains("NOPERM"), e.getMessage());
            assertTrue(e.getMessage().contains("keys and channels starting with 'dlock:'"), e.getMessage());
            assertFalse(everything(e).contains("bob-pw"), everything(e));
            assertConfiguration(Kind.PERMISSION, assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                    () -> keys.holder("auth")));
            e = acquireFails(scripts);
            assertConfiguration(Kind.PERMISSION, e);
            assertTrue(e.getMessage().contains("EVAL, EVALSHA"), e.getMessage());
        }
    }

    private static LockBackendException acquireFails(LockClient c) {
        return assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                () -> c.lock("auth").tryAcquire(Duration.ofSeconds(5)));
    }

    @Test
    void aUserWhoMayNotPublishCannotReleaseForLackOfPermission() {
        // the release script publishes to the waiters' channel: Redis 7.0 answers the denial inside the
        // script with ERR rather than NOPERM (7.2 says NOPERM); both are a missing permission
        LockBackend<Void> backend = TestSupport.openBackend(uri("dan:dan-pw"), Duration.ofSeconds(1));
        try {
            AcquireRequest request = TestSupport.request("auth-dan", Duration.ofSeconds(5));
            AttemptResult<Void> granted = backend.newAttempt(request).tryOnce();
            assertTrue(SpiAnswers.isGranted(granted), "the acquire script does not publish: " + granted);
            Grant<Void> held = new Grant<>(request.name(), request.ownerId(), SpiAnswers.token(granted),
                    request.leaseTime(), null);
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                    () -> backend.release(held));
            assertConfiguration(Kind.PERMISSION, e);
            assertTrue(e.getMessage().contains("PUBLISH"), e.getMessage());
            assertFalse(everything(e).contains("dan-pw"), everything(e));
        } finally {
            backend.close();
        }
    }

    private static void assertConfiguration(Kind kind, LockBackendException e) {
        assertTrue(e instanceof LockConfigurationException, "not a configuration failure: " + everything(e));
        assertEquals(kind, ((LockConfigurationException) e).kind(), e.getMessage());
        assertFalse(e.retryable(), "a configuration failure is not retryable");
    }

    @Test
    void theUriWithItsPasswordIsRedactedInToString() {
        try (LockClient c = open(uri("alice:" + PASSWORD))) {
            assertFalse(c.toString().contains(PASSWORD), c.toString());
            assertFalse(c.toString().contains("alice"), c.toString());
            assertTrue(c.toString().contains("***:***@"), c.toString());
        }
    }
}
