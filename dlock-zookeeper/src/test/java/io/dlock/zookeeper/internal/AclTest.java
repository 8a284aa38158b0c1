package io.dlock.zookeeper.internal;

import static io.dlock.zookeeper.internal.Harness.name;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.tck.TestTiming;
import io.dlock.zookeeper.ZkProcess;
import io.dlock.zookeeper.ZkServers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * With credentials in the URI, lock nodes belong to that identity: others can read them, not
 * delete them, and are refused with a {@link LockConfigurationException} of kind
 * {@code PERMISSION}; a server that refuses the credentials gives kind {@code CREDENTIALS}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AclTest {

    private static final String ALICE = "alice:wonder-land";
    private TestingServer server;
    private CuratorFramework bob;
    private CuratorFramework anonymous;
    private CuratorFramework aliceRaw;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @BeforeAll
    void start() throws Exception {
        server = ZkServers.standalone();
        bob = Harness.raw(server.getPort(), "bob:builder");
        anonymous = Harness.raw(server.getPort(), null);
        aliceRaw = Harness.raw(server.getPort(), ALICE);
    }

    @AfterEach
    void closeClients() {
        Collections.reverse(toClose);
        for (AutoCloseable c : toClose) {
            try {
                c.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        toClose.clear();
    }

    @AfterAll
    void stop() throws Exception {
        bob.close();
        anonymous.close();
        aliceRaw.close();
        server.close();
    }

    private LockClient client(String userInfo, String prefix) {
        LockClient c = Harness.client(Harness.uri(server.getPort(), userInfo, "prefix=" + prefix));
        toClose.add(c);
        return c;
    }

    @Test
    void otherIdentitiesCanReadButNotDeleteOrJoinTheQueue() throws Exception {
        String name = name("acl");
        LockClient alice = client(ALICE, "acl");
        Lease lease = alice.lock(name).tryAcquire().orElseThrow();
        String parent = "/acl/" + NameCodec.encode(name);
        List<String> children = anonymous.getChildren().forPath(parent); // the world may read
        assertEquals(1, children.size());
        String node = parent + "/" + children.get(0);
        assertEquals(lease.ownerId(), new String(bob.getData().forPath(node), StandardCharsets.UTF_8));

        for (CuratorFramework intruder : List.of(bob, anonymous)) {
            assertThrows(KeeperException.NoAuthException.class, () -> intruder.delete().forPath(node),
                    "another identity deleted a lock node");
            assertThrows(KeeperException.NoAuthException.class, () -> intruder.setData().forPath(node, new byte[1]));
            assertThrows(KeeperException.NoAuthException.class, () -> intruder.create()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(parent + "/lock-00000000000000000000000000000000-"),
                    "another identity queued in front of waiters");
            assertThrows(KeeperException.NoAuthException.class, () -> intruder.setACL()
                    .withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath(node));
        }
        assertTrue(lease.isValid(), "the lease is untouched");

        String aliceId = DigestAuthenticationProvider.generateDigest(ALICE);
        List<ACL> acl = aliceRaw.getACL().forPath(node); // others see the digest masked
        assertTrue(acl.contains(new ACL(ZooDefs.Perms.ALL, new org.apache.zookeeper.data.Id("digest", aliceId))), acl.toString());
        assertTrue(acl.contains(new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE)), acl.toString());
        assertEquals(2, acl.size(), acl.toString());
        assertEquals(acl, aliceRaw.getACL().forPath(parent), "the per-name parent is protected the same way");
        assertEquals(acl, aliceRaw.getACL().forPath("/acl"), "and so is the prefix node");
        aliceRaw.setData().forPath(node, lease.ownerId().getBytes(StandardCharsets.UTF_8)); // the owner identity may
        lease.release();
    }

    @Test
    void aClientWithOtherCredentialsGetsAClearErrorWithoutSecrets() throws Exception {
        String name = name("acl-other");
        LockClient alice = client(ALICE, "acl2");
        Lease lease = alice.lock(name).tryAcquire().orElseThrow();
        for (String other : List.of("bob:builder", "alice:wrong-password")) {
            LockClient intruder = client(other, "acl2");
            LockBackendException e = assertThrows(LockBackendException.class,
                    () -> intruder.lock(name).tryAcquire(Duration.ofMillis(300)));
            assertTrue(e.getMessage().contains("NOAUTH") && e.getMessage().contains("identity"), e.getMessage());
            // a wrong digest password is another identity to ZooKeeper: the ACL denies it, which retrying does not change
            assertTrue(e instanceof LockConfigurationException, "not a configuration failure: " + e);
            assertEquals(Kind.PERMISSION, ((LockConfigurationException) e).kind());
            assertFalse(e.retryable());
            assertFalse(e.getMessage().contains("builder") || e.getMessage().contains("wrong-password")
                    || e.getMessage().contains("wonder-land"), "no secret in: " + e.getMessage());
            assertEquals(lease.ownerId(), intruder.holder(name).orElseThrow().ownerId(), "but it can see who holds");
        }
        assertTrue(lease.isValid());
        lease.release();
    }

    @Test
    void credentialsTheServerRefusesAreACredentialsFailure() {
        // a server that does not take digest authentication refuses the URI's credentials (AUTHFAILED)
        try (ZkProcess noDigest = ZkProcess.start(List.of("-Dzookeeper.DigestAuthenticationProvider.enabled=false"))) {
            String uri = Harness.uri(noDigest.port(), ALICE, "prefix=refused");
            LockBackendException e = TestTiming.assertThrowsWithin(LockBackendException.class, Duration.ofSeconds(4), () -> {
                LockClient c = Harness.client(uri);
                toClose.add(c);
                c.lock(name("refused")).tryAcquire(Duration.ofSeconds(5));
            });
            System.out.println("[dlock-zookeeper] credentials refused: " + e.getMessage());
            assertTrue(e instanceof LockConfigurationException, "not a configuration failure: " + e);
            assertEquals(Kind.CREDENTIALS, ((LockConfigurationException) e).kind(), e.getMessage());
            assertFalse(e.retryable());
            assertFalse(e.getMessage().contains("wonder-land"), e.getMessage());
        }
    }

    @Test
    void theSameIdentityOnAnotherClientSharesTheLocks() throws Exception {
        String name = name("acl-same");
        LockClient one = client(ALICE, "acl3");
        LockClient two = client(ALICE, "acl3");
        Lease lease = one.lock(name).tryAcquire().orElseThrow();
        assertTrue(two.lock(name).tryAcquire().isEmpty());
        lease.release();
        Lease next = two.lock(name).tryAcquire(Duration.ofSeconds(5)).orElseThrow();
        assertTrue(next.fencingToken() > lease.fencingToken());
        next.release();
    }

    @Test
    void withoutCredentialsNodesAreOpen() throws Exception {
        String name = name("open");
        LockClient c = client(null, "open");
        Lease lease = c.lock(name).tryAcquire().orElseThrow();
        String parent = "/open/" + NameCodec.encode(name);
        String node = parent + "/" + anonymous.getChildren().forPath(parent).get(0);
        assertEquals(ZooDefs.Ids.OPEN_ACL_UNSAFE, anonymous.getACL().forPath(node));
        lease.release();
    }
}
