package io.dlock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockConfigurationException;
import io.dlock.LockOptions;
import io.dlock.tck.TestTiming;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * Redis Cluster mode against a real 3+3 cluster ({@link RedisClusterNodes}, started once for the
 * class): the slotted key layout, tokens per name, routing after {@code MOVED} and {@code ASK},
 * acquires held back (TRYAGAIN) while their slot migrates, the lock-delay warm-up, and URIs the
 * mode refuses. Each test uses its own key prefix, so that their lock-delay markers are apart.
 */
class RedisClusterTest {

    private static final Duration OP_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration LOCK_DELAY = Duration.ofSeconds(2);
    /** Generous, for a loaded 2-core machine; never a measured figure. */
    private static final Duration PATIENCE = Duration.ofSeconds(20);
    private static final AtomicInteger PREFIXES = new AtomicInteger();

    private static RedisClusterNodes cluster;
    private final List<AutoCloseable> closing = new ArrayList<>();

    @BeforeAll
    static void start() {
        cluster = RedisClusterNodes.start(List.of("--user", "alice", "on", ">alice-pw", "~t*", "&t*", "+@all",
                "--user", "bob", "on", ">bob-pw", "~*", "&*", "+@all", "-cluster|slots"), null);
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    /** A fresh prefix, its lock-delay marked passed on every slot unless {@code warm} is false. */
    private static String prefix(boolean marked) {
        String p = "t" + PREFIXES.incrementAndGet() + ":";
        if (marked) {
            cluster.markLockDelayPassed(p);
        }
        return p;
    }

    private LockClient client(String prefix) {
        LockClient c = LockClient.open(LockClientConfig.builder("redis-cluster://" + cluster.seeds() + "?prefix=" + prefix
                + "&lockDelay=" + LOCK_DELAY).operationTimeout(OP_TIMEOUT)
                .defaultLockOptions(LockOptions.builder().leaseTime(Duration.ofSeconds(1)).build()).build());
        closing.add(c);
        return c;
    }

    private static int slot(String name) {
        return JedisClusterCRC16.getCRC16(name) & 16383;
    }

    /** Names whose whole-name slot is the given one (found by trying). */
    private static List<String> namesInSlot(int slot, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; out.size() < n; i++) {
            String name = "same-slot-" + i;
            if (slot(name) == slot) {
                out.add(name);
            }
        }
        return out;
    }

    private static String key(String prefix, String name) {
        return prefix + "{" + RedisClusterNodes.TestTags.tag(slot(name)) + "}lock:" + name;
    }

    @Test
    void keysLieInTheNamesSlotOnItsPrimaryAndTokensIncreasePerName() {
        String prefix = prefix(true);
        LockClient c = client(prefix);
        Set<Integer> primariesUsed = new HashSet<>();
        Map<String, Long> lastToken = new HashMap<>();
        // braces in a name are not a hash tag: {x}a and {x}b land in different slots
        List<String> names = List.of("alpha", "beta", "gamma", "delta", "{x}a", "{x}b", "name with spaces", "ünïcode");
        assertNotEquals(slot("{x}a"), slot("{x}b"));
        for (int round = 0; round < 3; round++) {
            for (String name : names) {
                Lease lease = c.lock(name).tryAcquire().orElseThrow(() -> new AssertionError("not granted: " + name));
                int owner = cluster.ownerOf(slot(name));
                try (Jedis j = cluster.jedis(owner)) {
                    assertEquals(lease.ownerId() + ":" + lease.fencingToken(), j.get(key(prefix, name)),
                            "the lock key of '" + name + "' lies in its slot on the slot's primary");
                    assertTrue(j.exists(prefix + "{" + RedisClusterNodes.TestTags.tag(slot(name)) + "}fence"));
                }
                primariesUsed.add(owner);
                Long before = lastToken.put(name, lease.fencingToken());
                assertTrue(before == null || lease.fencingToken() > before, "tokens increase per name");
                lease.release();
            }
        }
        assertEquals(3, primariesUsed.size(), "the names spread over every primary");
    }

    @Test
    void aMovedSlotIsFollowedAndItsCounterMovesWithIt() throws Exception {
        String prefix = prefix(true);
        LockClient c = client(prefix);
        String name = "moving-" + System.nanoTime();
        Lease first = c.lock(name).tryAcquire().orElseThrow();
        first.release();
        int slot = slot(name);
        int from = cluster.ownerOf(slot);
        int to = (from + 1) % RedisClusterNodes.PRIMARIES;
        cluster.migrate(slot, to, step -> { });
        // the client's table still names the old owner: it answers MOVED, the client follows. The slot's marker
        // moved too and names the old owner's server process, so the new owner waits one lock-delay first (nothing
        // in the marker tells a migration from a failover; see ARCHITECTURE)
        Lease second = c.lock(name).tryAcquire(PATIENCE).orElseThrow();
        assertTrue(second.fencingToken() > first.fencingToken(), "the counter moved with the slot");
        try (Jedis j = cluster.jedis(to)) {
            assertTrue(j.exists(key(prefix, name)), "the lock is on the new owner");
        }
        second.release();
    }

    @Test
    void whileItsSlotMigratesAHeldLockIsRenewedAndReleasedThroughAskAndNoFreeLockIsGranted() throws Exception {
        String prefix = prefix(true);
        LockClient holderClient = client(prefix);
        LockClient waiterClient = client(prefix);
        int slot = slot("migrate-held-" + System.nanoTime());
        List<String> names = namesInSlot(slot, 2);
        String held = names.get(0);
        String free = names.get(1);
        Lease lease = holderClient.lock(held, LockOptions.builder().leaseTime(Duration.ofSeconds(2)).build())
                .tryAcquire().orElseThrow();
        Lease before = holderClient.lock(free).tryAcquire().orElseThrow();
        long tokenBefore = before.fencingToken();
        before.release();
        int from = cluster.ownerOf(slot);
        int to = (from + 1) % RedisClusterNodes.PRIMARIES;
        List<CompletableFuture<Optional<Lease>>> during = new ArrayList<>();
        long[] settledAt = new long[1];
        cluster.migrate(slot, to, step -> {
            if (step == 3) {
                // every key of the slot is on the target, the slot not yet handed over: the held lock answers
                // through ASK (renewed for longer than its lease), a free one is not granted (TRYAGAIN)
                TestTiming.sleep(2500);
                assertTrue(lease.isValid(), "renewed through ASK while the slot migrates");
                Optional<io.dlock.LockHolder> h = waiterClient.holder(held);
                assertTrue(h.isPresent(), "the holder query follows ASK");
                assertEquals(lease.fencingToken(), h.get().fencingToken());
                during.add(waiterClient.lock(free).acquireAsync(PATIENCE));
                TestTiming.sleep(1500);
                assertFalse(during.get(0).isDone(), "no free lock is granted in a slot that is migrating");
                settledAt[0] = System.nanoTime();
            }
        });
        Optional<Lease> after = during.get(0).get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
        assertTrue(after.isPresent(), "granted once the slot settled on its new owner");
        assertTrue(after.get().fencingToken() > tokenBefore, "the slot's counter continued on the new owner");
        assertTrue(lease.isValid());
        lease.release();
        after.get().release();
        try (Jedis j = cluster.jedis(to)) {
            assertFalse(j.exists(key(prefix, held)), "released on the new owner");
        }
    }

    @Test
    void aLockDelayFoundOnOneSlotStartsItOnEverySlot() throws Exception {
        // a fresh prefix: no slot has a marker, as after every node lost its data
        String prefix = prefix(false);
        LockClient c = client(prefix);
        long start = System.nanoTime();
        assertTrue(c.lock("first-touch").tryAcquire().isEmpty(), "a slot without its marker starts a lock-delay");
        // wait out one lock-delay from that first answer (plus margin for a loaded machine)
        TestTiming.await("the first name is granted after the lock-delay", PATIENCE,
                () -> c.lock("first-touch").tryAcquire().map(l -> {
                    l.release();
                    return true;
                }).orElse(false));
        assertTrue(System.nanoTime() - start >= LOCK_DELAY.toNanos() - TimeUnit.MILLISECONDS.toNanos(20));
        // names in other slots, on every primary, never touched before: their lock-delay started with the first
        Set<Integer> owners = new HashSet<>();
        for (int i = 0; i < 30; i++) {
            String name = "never-touched-" + i;
            owners.add(cluster.ownerOf(slot(name)));
            // the warm-up runs in the background right after the first answer: allow it a quarter of the lock-delay
            // (without it, each of these names would wait a whole lock-delay from its own first touch)
            Optional<Lease> l = c.lock(name).tryAcquire(LOCK_DELAY.dividedBy(4));
            assertTrue(l.isPresent(), "'" + name + "' (slot " + slot(name) + ") was warmed up with the first answer");
            l.get().release();
        }
        assertEquals(3, owners.size());
    }

    @Test
    void anAclUserLimitedToThePrefixServesAndOneWithoutClusterSlotsIsRefused() throws Exception {
        String prefix = prefix(true);
        try (LockClient alice = LockClient.open(LockClientConfig.builder("redis-cluster://alice:alice-pw@"
                + cluster.seeds() + "?prefix=" + prefix + "&lockDelay=" + LOCK_DELAY).operationTimeout(OP_TIMEOUT)
                .defaultLockOptions(LockOptions.builder().leaseTime(Duration.ofSeconds(1)).build()).build())) {
            for (int i = 0; i < 10; i++) {
                Lease l = alice.lock("acl-" + i).tryAcquire().orElseThrow();
                assertEquals(l.fencingToken(), alice.holder("acl-" + i).orElseThrow().fencingToken());
                l.release();
            }
        }
        try (LockClient bob = LockClient.open(LockClientConfig.builder("redis-cluster://bob:bob-pw@" + cluster.seeds()
                + "?prefix=" + prefix + "&lockDelay=" + LOCK_DELAY).operationTimeout(OP_TIMEOUT)
                .defaultLockOptions(LockOptions.builder().leaseTime(Duration.ofSeconds(1)).build()).build())) {
            LockConfigurationException e = assertThrows(LockConfigurationException.class, () -> bob.lock("x").tryAcquire());
            assertEquals(LockConfigurationException.Kind.PERMISSION, e.kind());
            assertTrue(e.getMessage().contains("CLUSTER SLOTS"), e.getMessage());
            assertFalse(e.getMessage().contains("bob-pw"), e.getMessage());
        }
    }

    @Test
    void theModeRefusesBadUris() {
        for (String bad : List.of("redis-cluster://127.0.0.1:7000/0", "redis-cluster://127.0.0.1:7000?prefix=a{b}",
                "redis-cluster://127.0.0.1:7000?prefix=%7Bx", "redis-cluster://127.0.0.1:7000?database=1",
                "redis-cluster://127.0.0.1:7000?poolSize=0")) {
            assertThrows(IllegalArgumentException.class, () -> LockClient.open(LockClientConfig.builder(bad).build()).close(),
                    bad);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LockClient.open(
                LockClientConfig.builder("redis-cluster://127.0.0.1:7000?prefix=x{y}").build()).close());
        assertTrue(e.getMessage().contains("prefix"), e.getMessage());
    }

    @Test
    void aServerThatIsNoClusterNodeIsAConfigurationError() {
        try (RedisServer plain = RedisServer.start();
             LockClient c = LockClient.open(LockClientConfig.builder("redis-cluster://" + RedisServer.HOST + ":"
                     + plain.port()).operationTimeout(OP_TIMEOUT).build())) {
            LockConfigurationException e = assertThrows(LockConfigurationException.class,
                    () -> c.lock("x").tryAcquire());
            assertEquals(LockConfigurationException.Kind.INCOMPATIBLE_SERVER, e.kind());
            assertTrue(e.getMessage().contains("redis://"), e.getMessage());
        }
    }

    @Test
    void aPlainUriNamingAClusterNodeIsAConfigurationErrorThatNamesTheClusterScheme() {
        String node = cluster.seeds().split(",")[0];
        try (LockClient c = LockClient.open(LockClientConfig.builder("redis://" + node + "?prefix=" + prefix(false))
                .operationTimeout(OP_TIMEOUT).build())) {
            LockConfigurationException e = assertThrows(LockConfigurationException.class,
                    () -> c.lock("plain-uri").tryAcquire());
            assertEquals(LockConfigurationException.Kind.INCOMPATIBLE_SERVER, e.kind());
            assertTrue(e.getMessage().contains("redis-cluster://"), e.getMessage());
        }
    }
}
