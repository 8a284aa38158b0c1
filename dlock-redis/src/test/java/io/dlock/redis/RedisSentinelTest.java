package io.dlock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockConfigurationException;
import io.dlock.LockOptions;
import java.io.PrintWriter;
import java.io.StringWriter;
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
import redis.clients.jedis.Jedis;

/**
 * Sentinel mode against a real group (one primary, two replicas, three sentinels) with passwords
 * on the data nodes and the sentinels: following a failover ({@code SENTINEL FAILOVER}, and a killed
 * primary) with tokens above every token from before, the waiters' pub/sub connection following
 * the primary, an ACL user that may not run {@code ROLE}, and the failures a misconfigured or
 * unreachable deployment gives.
 */
class RedisSentinelTest {

    private static final String DATA_PASSWORD = "data-s3cret";
    private static final String SENTINEL_PASSWORD = "sentinel-s3cret";
    /** A data-node user with dlock's permissions but not ROLE: the client then relies on READONLY. */
    private static final String APP_USER = "app";
    private static final String APP_PASSWORD = "app-s3cret";
    /** A data-node user with dlock's permissions but not INFO: a failover would be invisible. */
    private static final String NO_INFO_USER = "noinfo";
    private static final Duration OP_TIMEOUT = Duration.ofSeconds(1);
    /** The lock-delay: short, so that grants after a failover come soon. */
    private static final Duration LOCK_DELAY = Duration.ofSeconds(1);
    /** Generous: a failover plus a lock-delay on a loaded 2-core machine. */
    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final LockOptions SHORT = LockOptions.builder().leaseTime(Duration.ofMillis(500)).build();

    private static RedisSentinelGroup group;
    private final List<LockClient> clients = new ArrayList<>();

    @BeforeAll
    static void startGroup() {
        group = RedisSentinelGroup.start(List.of("--user", APP_USER, "on", ">" + APP_PASSWORD, "~dlock:*", "&dlock:*",
                "+@all", "-role", "--user", NO_INFO_USER, "on", ">" + APP_PASSWORD, "~dlock:*", "&dlock:*", "+@all", "-info"),
                DATA_PASSWORD, SENTINEL_PASSWORD);
    }

    @AfterAll
    static void stopGroup() {
        if (group != null) {
            group.close();
        }
    }

    @AfterEach
    void closeClients() {
        clients.forEach(LockClient::close);
    }

    private LockClient open(String uri) {
        LockClient c = LockClient.open(LockClientConfig.builder(uri).operationTimeout(OP_TIMEOUT).build());
        clients.add(c);
        return c;
    }

    private static String uri(String userInfo, String master, String sentinelPassword) {
        return "redis-sentinel://" + userInfo + "@" + group.sentinelHosts() + "/" + master + "?lockDelay=" + LOCK_DELAY
                + (sentinelPassword == null ? "" : "&sentinelPassword=" + sentinelPassword);
    }

    private LockClient app() {
        return open(uri(APP_USER + ":" + APP_PASSWORD, RedisSentinelGroup.MASTER, SENTINEL_PASSWORD));
    }

    private LockClient admin() {
        return open(uri(":" + DATA_PASSWORD, RedisSentinelGroup.MASTER, SENTINEL_PASSWORD));
    }

    /**
     * After {@code SENTINEL FAILOVER} the old primary is a replica: the client's pooled connections
     * to it meet READONLY, and the call asks the sentinels again and runs on the new primary within
     * its own budget (no failure). The new primary has another run id, so it starts a lock-delay,
     * and its tokens are above every token from before.
     */
    @Test
    void followsASentinelFailoverAndTokensStayAbove() throws Exception {
        for (LockClient c : List.of(app(), admin())) {
            Lease before = c.lock("failover", SHORT).tryAcquire(PATIENCE).orElseThrow();
            long token = before.fencingToken();
            before.release();
            RedisServer old = group.primary();
            group.failover();
            assertNotEquals(old, group.primary());
            // must not throw: READONLY from the demoted primary is followed within the call
            Optional<Lease> first = c.lock("failover", SHORT).tryAcquire();
            first.ifPresent(Lease::release);
            Lease after = c.lock("failover", SHORT).tryAcquire(PATIENCE).orElseThrow();
            assertTrue(after.fencingToken() > token, after.fencingToken() + " after " + token);
            after.release();
        }
    }

    /**
     * A killed primary: calls fail (retryable) until the sentinels promote a replica, then grants
     * resume on it, with tokens above every token granted before; the killed node comes back as a
     * replica.
     */
    @Test
    void followsAKilledPrimaryAndTokensStayAbove() throws Exception {
        LockClient c = app();
        long max = 0;
        for (int i = 0; i < 20; i++) {
            Lease l = c.lock("kill-" + i, SHORT).tryAcquire(PATIENCE).orElseThrow();
            max = Math.max(max, l.fencingToken());
            if (i % 2 == 0) {
                l.release(); // half are left to expire: lost with the primary or not, the tokens must stay above
            }
        }
        group.killPrimary();
        try {
            Lease after = c.lock("kill-0", SHORT).tryAcquire(PATIENCE).orElseThrow();
            assertTrue(after.fencingToken() > max, after.fencingToken() + " after " + max);
            after.release();
        } finally {
            group.restartKilled();
        }
    }

    /**
     * The waiters' pub/sub connection moves to the new primary after a failover, and a waiter is
     * handed the lock on release there.
     */
    @Test
    void theWaitersConnectionFollowsThePrimary() throws Exception {
        LockClient holder = admin();
        LockClient waiter = app();
        holder.lock("warm-up", SHORT).tryAcquire(PATIENCE).orElseThrow().release();
        group.failover();
        Lease held = holder.lock("wait", SHORT).tryAcquire(PATIENCE).orElseThrow();
        CompletableFuture<Optional<Lease>> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return waiter.lock("wait", SHORT).tryAcquire(PATIENCE);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
        RedisServer primary = group.primary();
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        boolean subscribed = false;
        while (!subscribed && System.nanoTime() - deadline < 0) {
            try (Jedis j = group.data(primary)) {
                subscribed = j.clientList().lines().anyMatch(l -> l.contains("name=dlock") && !l.contains(" sub=0 "));
            }
            Thread.sleep(20);
        }
        assertTrue(subscribed, "no subscribed dlock connection on the new primary " + primary);
        held.release();
        Lease got = waiting.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
        got.release();
    }

    /**
     * A sentinel that names a replica (its view may be a moment old): with a user that may run
     * ROLE, the new connection is refused by the ROLE check; without, the script meets READONLY.
     * Either way the client asks again and, named the replica again, fails retryably (a failover
     * may be under way), not with the configuration error READONLY is for {@code redis://}.
     */
    @Test
    void aSentinelNamingAReplicaGivesARetryableFailure() {
        try (SentinelStub stub = new SentinelStub(group)) {
            int primary = group.primaryIndex();
            int replicaPort = group.nodes().get((primary + 1) % group.nodes().size()).port();
            String master = SentinelStub.masterName(List.of(replicaPort, replicaPort, replicaPort));
            for (String user : new String[] {":" + DATA_PASSWORD, APP_USER + ":" + APP_PASSWORD}) {
                LockClient c = open("redis-sentinel://" + user + "@" + stub.address().getHostString() + ":"
                        + stub.address().getPort() + "/" + master + "?lockDelay=" + LOCK_DELAY);
                LockBackendException e = assertThrows(LockBackendException.class, () -> c.lock("x", SHORT).tryAcquire());
                assertFalse(e instanceof LockConfigurationException, e.toString());
                assertTrue(e.getMessage().contains("READONLY"), e.getMessage());
            }
        }
    }

    /** Sentinels that do not answer: a retryable failure within about the operation timeout. */
    @Test
    void unreachableSentinelsFailRetryablyWithinTheOperationTimeout() {
        LockClient c = open("redis-sentinel://127.0.0.1:" + RedisServer.freePort() + ",127.0.0.1:" + RedisServer.freePort()
                + "/" + RedisSentinelGroup.MASTER);
        long start = System.nanoTime();
        LockBackendException e = assertThrows(LockBackendException.class, () -> c.lock("x", SHORT).tryAcquire());
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertFalse(e instanceof LockConfigurationException, e.toString());
        assertTrue(e.getMessage().contains("sentinel"), e.getMessage());
        // generous: the operation timeout (1 s) plus slack for a loaded machine
        assertTrue(ms < OP_TIMEOUT.toMillis() + 4000, ms + " ms");
    }

    /** A master name the sentinels do not know: a configuration error that names it. */
    @Test
    void aWrongMasterNameIsAConfigurationError() {
        LockClient c = open(uri(APP_USER + ":" + APP_PASSWORD, "no-such-master", SENTINEL_PASSWORD));
        LockConfigurationException e = assertThrows(LockConfigurationException.class, () -> c.lock("x", SHORT).tryAcquire());
        assertEquals(LockConfigurationException.Kind.MISSING_RESOURCE, e.kind(), e.getMessage());
        assertTrue(e.getMessage().contains("no-such-master"), e.getMessage());
    }

    /**
     * A user who may not run INFO: with the lock-delay a permission error naming the remedy (a
     * promoted replica could not be told by its run id); without it, locks.
     */
    @Test
    void aUserWithoutInfoFailsClosedWithTheLockDelay() throws Exception {
        LockClient c = open(uri(NO_INFO_USER + ":" + APP_PASSWORD, RedisSentinelGroup.MASTER, SENTINEL_PASSWORD));
        LockConfigurationException e = assertThrows(LockConfigurationException.class, () -> c.lock("x", SHORT).tryAcquire());
        assertEquals(LockConfigurationException.Kind.PERMISSION, e.kind(), e.getMessage());
        assertTrue(e.getMessage().contains("INFO") && e.getMessage().contains("lockDelay=0"), e.getMessage());
        LockClient without = open("redis-sentinel://" + NO_INFO_USER + ":" + APP_PASSWORD + "@" + group.sentinelHosts()
                + "/" + RedisSentinelGroup.MASTER + "?lockDelay=0&sentinelPassword=" + SENTINEL_PASSWORD);
        without.lock("x", SHORT).tryAcquire(PATIENCE).orElseThrow().release();
    }

    /** A wrong or missing sentinel password: a credentials error that never shows the password. */
    @Test
    void aWrongSentinelPasswordIsACredentialsErrorThatHidesIt() {
        for (String pw : new String[] {"wrong-s3cret", null}) {
            LockClient c = open(uri(APP_USER + ":" + APP_PASSWORD, RedisSentinelGroup.MASTER, pw));
            LockConfigurationException e = assertThrows(LockConfigurationException.class, () -> c.lock("x", SHORT).tryAcquire());
            assertEquals(LockConfigurationException.Kind.CREDENTIALS, e.kind(), e.getMessage());
            StringWriter trace = new StringWriter();
            e.printStackTrace(new PrintWriter(trace));
            for (String secret : new String[] {"wrong-s3cret", SENTINEL_PASSWORD, APP_PASSWORD}) {
                assertFalse(trace.toString().contains(secret), trace.toString());
            }
            assertFalse(c.toString().contains(APP_PASSWORD), c.toString());
        }
    }
}
