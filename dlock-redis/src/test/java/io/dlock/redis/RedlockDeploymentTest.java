package io.dlock.redis;

import static io.dlock.tck.TestTiming.assertThrowsWithin;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockConfigurationException;
import io.dlock.LockOptions;
import io.dlock.tck.TestTiming;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.net.ssl.SSLSocketFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * Redlock deployments: nodes with persistence (tokens keep increasing after every node restarted,
 * from the persisted counters, whatever the clocks say), an ACL user, and TLS ({@code redlocks://}).
 * Each test starts its own three servers and stops them. Bounds are generous, for a loaded machine.
 */
class RedlockDeploymentTest {

    private static final Duration OP_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration PATIENCE = Duration.ofSeconds(20);

    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    private List<RedisServer> nodes(List<String> args) {
        List<RedisServer> nodes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            RedisServer s = RedisServer.start(args);
            closing.add(s);
            nodes.add(s);
        }
        return nodes;
    }

    private static String hosts(List<RedisServer> nodes) {
        return nodes.stream().map(s -> RedisServer.HOST + ":" + s.port()).collect(Collectors.joining(","));
    }

    private LockClient client(String uri, Duration lease, RedisLockProvider provider) {
        LockClient c = LockClient.open(LockClientConfig.builder(uri).operationTimeout(OP_TIMEOUT)
                .defaultLockOptions(LockOptions.builder().leaseTime(lease).build()).build(), provider);
        closing.add(c);
        return c;
    }

    @Test
    void withPersistenceTokensKeepIncreasingAfterEveryNodeRestarted() throws Exception {
        List<RedisServer> nodes = nodes(List.of("--appendonly", "yes", "--appendfsync", "always"));
        // a counter far above any clock reading: only what the nodes persisted can keep tokens above it
        long high = 5_000_000_000_000_000L;
        for (RedisServer s : nodes) {
            try (Jedis j = TestSupport.jedis(s)) {
                j.set("dlock:fence", Long.toString(high));
            }
        }
        Duration lease = Duration.ofSeconds(1);
        LockClient c = client("redlock://" + hosts(nodes) + "?lockDelay=PT1S", lease, new RedisLockProvider());
        Lease first = c.lock("rl-persist").tryAcquire(PATIENCE).orElseThrow();
        assertEquals(high + 1, first.fencingToken());
        first.release();
        for (RedisServer s : nodes) {
            s.kill();
        }
        for (RedisServer s : nodes) {
            s.restart(); // replays its append-only file: the counter is back; a new run id starts its lock-delay
        }
        Lease second = c.lock("rl-persist").tryAcquire(PATIENCE).orElseThrow();
        assertTrue(second.fencingToken() > first.fencingToken(), second.fencingToken() + " after " + first.fencingToken());
        second.release();
    }

    @Test
    void anAclUserWithTheCommandsDlockNeedsWorksAndOneWithoutKeysIsRefused() throws Exception {
        List<RedisServer> nodes = nodes(List.of("--user", "rl", "on", ">rl-pw", "~dlock:*", "&dlock:*", "+@read",
                "+@write", "+@scripting", "+@pubsub", "+@connection", "+info", "+time",
                "--user", "nokeys", "on", ">nk-pw", "~other:*", "&*", "+@all"));
        LockClient c = client("redlock://rl:rl-pw@" + hosts(nodes) + "?lockDelay=PT2S", Duration.ofSeconds(2),
                new RedisLockProvider());
        Lease lease = c.lock("rl-acl").tryAcquire(PATIENCE).orElseThrow();
        assertEquals(lease.fencingToken(), c.holder("rl-acl").orElseThrow().fencingToken());
        lease.release();
        LockClient refused = client("redlock://nokeys:nk-pw@" + hosts(nodes) + "?lockDelay=PT2S", Duration.ofSeconds(2),
                new RedisLockProvider());
        LockConfigurationException e = assertThrowsWithin(LockConfigurationException.class, Duration.ofSeconds(3),
                () -> refused.lock("rl-acl").tryAcquire(Duration.ofSeconds(5)));
        assertEquals(LockConfigurationException.Kind.PERMISSION, e.kind(), e.toString());
        // the password never shows
        assertTrue(!e.getMessage().contains("nk-pw") && !e.getMessage().contains("rl-pw"), e.getMessage());
    }

    @Test
    void redlocksSpeaksTlsToEveryNode() throws Exception {
        Path dir = Files.createTempDirectory("dlock-redlock-tls-");
        closing.add(() -> {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        });
        Path cert = TestSupport.selfSignedCertificate(dir);
        assumeTrue(cert != null, "openssl is needed to make the test certificate");
        Path key = dir.resolve("key.pem");
        SSLSocketFactory trusting = TestSupport.trusting(cert);
        List<RedisServer> nodes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            RedisServer s = RedisServer.startTls(cert, key);
            closing.add(s);
            s.markLockDelayPassed(0, RedisServer.DEFAULT_PREFIX, trusting);
            nodes.add(s);
        }
        String uri = "redlocks://" + hosts(nodes) + "?lockDelay=PT5S";
        LockClient a = client(uri, Duration.ofSeconds(5), RedisLockProvider.withSslSocketFactory(trusting));
        LockClient b = client(uri, Duration.ofSeconds(5), RedisLockProvider.withSslSocketFactory(trusting));
        Lease lease = a.lock("rl-tls").tryAcquire(PATIENCE).orElseThrow();
        assertEquals(lease.fencingToken(), b.holder("rl-tls").orElseThrow().fencingToken());
        // the waiter's pub/sub connections are TLS too
        var waiting = b.lock("rl-tls").acquireAsync(PATIENCE);
        TestTiming.sleep(200);
        lease.release();
        Lease next = waiting.get(PATIENCE.toSeconds(), TimeUnit.SECONDS).orElseThrow();
        assertTrue(next.fencingToken() > lease.fencingToken());
        next.release();
        // a plain redlock:// client cannot talk to TLS nodes: a failure in time, never a grant
        LockClient plain = client("redlock://" + hosts(nodes) + "?lockDelay=PT5S", Duration.ofSeconds(5),
                new RedisLockProvider());
        assertThrowsWithin(io.dlock.LockBackendException.class, Duration.ofSeconds(3),
                () -> plain.lock("rl-tls").tryAcquire(Duration.ofSeconds(5)));
    }
}
