package io.dlock.zookeeper.internal;

import static io.dlock.tck.SpiAnswers.*;

import static io.dlock.zookeeper.internal.Harness.LEASE;
import static io.dlock.zookeeper.internal.Harness.OP_TIMEOUT;
import static io.dlock.zookeeper.internal.Harness.acquire;
import static io.dlock.zookeeper.internal.Harness.eventually;
import static io.dlock.zookeeper.internal.Harness.name;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Capability;
import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockHolder;
import io.dlock.LockOptions;
import io.dlock.spi.Grant;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.tck.TcpProxy;
import io.dlock.zookeeper.ZkServers;
import io.dlock.zookeeper.internal.Harness.Events;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;

/** The backend's primitives against a real, embedded ZooKeeper server. */
class ZkBackendTest extends EmbeddedServerTest {

    private ZkBackend backend(String extra) {
        ZkBackend b = Harness.open(Harness.uri(server.getPort(), null, extra), new Events());
        toClose.add(b);
        return b;
    }

    private LockClient client() {
        LockClient c = Harness.client(Harness.uri(server.getPort(), null, "prefix=client-tests"));
        toClose.add(c);
        return c;
    }

    @Test
    void grantIsTheLowestNodeAndItsTokenIsTheNodesCzxid() throws Exception {
        ZkBackend b = backend("prefix=t1");
        String name = name("grant") + "/with:odd%chars";
        Grant<ZkGrant> held = acquire(b, name, Duration.ZERO);
        assertNotNull(held, "a free lock is granted at once");
        ZkGrant g = held.state();
        assertEquals("/t1/" + NameCodec.encode(name), ZkBackend.parentOf(g.path));
        assertTrue(ZkBackend.nodeOf(g.path).startsWith("lock-" + held.ownerId() + "-"), g.path);
        Stat stat = new Stat();
        byte[] data = raw.getData().storingStatIn(stat).forPath(g.path);
        assertEquals(held.ownerId(), new String(data, StandardCharsets.UTF_8), "the node's data is the owner id");
        assertEquals(stat.getCzxid(), held.fencingToken(), "the token is the node's creation zxid");
        assertTrue(stat.getEphemeralOwner() != 0, "the lock node is ephemeral");

        assertTrue(released(b.release(held)), "the holder's release deletes its node");
        assertNull(raw.checkExists().forPath(g.path));
        assertFalse(released(b.release(held)), "a second release finds nothing to delete");
    }

    @Test
    void renewSaysTrueWhileTheNodeIsThereAndFalseOnceItIsGone() throws Exception {
        ZkBackend b = backend("prefix=t2");
        Grant<ZkGrant> one = acquire(b, name("renew-a"), Duration.ZERO);
        Grant<ZkGrant> two = acquire(b, name("renew-b"), Duration.ZERO);
        assertArrayEquals(new boolean[] {true, true}, renewed(b.renew(List.of(one, two))));
        raw.delete().forPath(two.state().path); // the same ensemble, no ACL: anyone may
        assertArrayEquals(new boolean[] {true, false}, renewed(b.renew(List.of(one, two))));
        assertArrayEquals(new boolean[0], renewed(b.renew(List.of())));
        assertTrue(released(b.release(one)));
        assertArrayEquals(new boolean[] {false}, renewed(b.renew(List.of(one))));
    }

    @Test
    void tokensStrictlyIncreaseAcrossClientsAndReopenedClients() throws Exception {
        String name = name("tokens");
        List<Long> tokens = new ArrayList<>();
        ZkBackend a = backend("prefix=t3");
        ZkBackend c = backend("prefix=t3");
        for (int i = 0; i < 4; i++) {
            for (ZkBackend b : List.of(a, c)) {
                Grant<ZkGrant> h = acquire(b, name, Duration.ofSeconds(5));
                tokens.add(h.fencingToken());
                released(b.release(h));
            }
        }
        a.close();
        ZkBackend reopened = backend("prefix=t3");
        tokens.add(acquire(reopened, name, Duration.ofSeconds(5)).fencingToken());
        for (int i = 1; i < tokens.size(); i++) {
            assertTrue(tokens.get(i) > tokens.get(i - 1), "tokens increase: " + tokens);
        }
    }

    @Test
    void abandonLeavesNothingQueued() throws Exception {
        ZkBackend a = backend("prefix=t4");
        ZkBackend c = backend("prefix=t4");
        String name = name("abandon");
        Grant<ZkGrant> held = acquire(a, name, Duration.ZERO);
        String parent = ZkBackend.parentOf(held.state().path);
        AcquireAttempt<ZkGrant> waiting = c.newAttempt(new AcquireRequest(name, Harness.newOwner(), LEASE));
        assertFalse(isGranted(waiting.tryOnce()), "held by a");
        assertEquals(2, raw.getChildren().forPath(parent).size(), "the waiter queued a node");
        waiting.abandon();
        waiting.abandon(); // idempotent
        assertEquals(1, raw.getChildren().forPath(parent).size(), "abandon deleted the waiter's node");
        released(a.release(held));
        assertNotNull(acquire(c, name, Duration.ZERO), "nothing stands in the way after release");
    }

    @Test
    void holderReportsTheOwnerAndTokenOfTheFirstNode() throws Exception {
        ZkBackend a = backend("prefix=t5");
        ZkBackend c = backend("prefix=t5");
        String name = name("holder");
        assertEquals(Optional.empty(), c.holder(name), "a name never used is free");
        Grant<ZkGrant> held = acquire(a, name, Duration.ZERO);
        AcquireAttempt<ZkGrant> queued = c.newAttempt(new AcquireRequest(name, Harness.newOwner(), LEASE));
        assertFalse(isGranted(queued.tryOnce()));
        LockHolder h = c.holder(name).orElseThrow();
        assertEquals(held.ownerId(), h.ownerId(), "the holder, not the waiter");
        assertEquals(held.fencingToken(), h.fencingToken());
        assertEquals(name, h.lockName());
        queued.abandon();
        released(a.release(held));
        assertEquals(Optional.empty(), c.holder(name), "free after release");
    }

    @Test
    void emptyParentsAreRemovedByTheServer() throws Exception {
        ZkBackend b = backend("prefix=t6");
        String name = name("cleanup");
        Grant<ZkGrant> held = acquire(b, name, Duration.ZERO);
        String parent = ZkBackend.parentOf(held.state().path);
        assertNotNull(raw.checkExists().forPath(parent));
        released(b.release(held));
        // generous: the server checks for empty containers every 500 ms in these tests (every minute by default)
        assertTrue(eventually(() -> {
            try {
                return raw.checkExists().forPath(parent) == null;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, Duration.ofSeconds(10)), "the empty per-name parent (a container node) was deleted");
        assertTrue(eventually(() -> {
            try {
                return raw.checkExists().forPath("/t6") == null;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, Duration.ofSeconds(10)), "and then the empty prefix node (a container too)");
        assertNotNull(acquire(b, name, Duration.ZERO), "and the name works again");
    }

    @Test
    void waitersQueueInArrivalOrderAndEachWatchesOnlyItsPredecessor() throws Exception {
        String name = name("fifo");
        LockClient first = client();
        Lease held = first.lock(name).tryAcquire().orElseThrow();
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        int waiters = 4;
        for (int i = 0; i < waiters; i++) {
            LockClient c = client();
            int index = i;
            Thread t = new Thread(() -> {
                try {
                    Lease l = c.lock(name).tryAcquire(Duration.ofSeconds(30)).orElseThrow();
                    order.add(index);
                    tokens.add(l.fencingToken());
                    Thread.sleep(20);
                    l.release();
                } catch (Throwable e) {
                    failures.add(e);
                }
            }, "fifo-waiter-" + i);
            threads.add(t);
            t.start();
            // arrivals well apart, so that arrival order is defined
            assertTrue(eventually(() -> watchesByPath(name).values().stream().mapToInt(Integer::intValue).sum() == index + 1,
                    Duration.ofSeconds(10)), "waiter " + index + " watches");
        }
        Map<String, Integer> watches = watchesByPath(name);
        assertEquals(waiters, watches.size(), "one watched node per waiter: " + watches);
        for (Map.Entry<String, Integer> e : watches.entrySet()) {
            assertEquals(1, e.getValue(), "exactly one session watches " + e.getKey() + ": no herd");
            assertTrue(e.getKey().contains("/lock-"), "only lock nodes are watched, never the parent: " + e.getKey());
        }
        held.release();
        for (Thread t : threads) {
            t.join(30_000);
        }
        assertEquals(List.of(), failures);
        assertEquals(List.of(0, 1, 2, 3), order, "granted in arrival order");
        for (int i = 1; i < tokens.size(); i++) {
            assertTrue(tokens.get(i) > tokens.get(i - 1), "tokens follow the grants: " + tokens);
        }
    }

    /** Watches on the nodes of one lock name, counted per path, from the server's {@code wchp} command. */
    private Map<String, Integer> watchesByPath(String name) {
        String parent = "/client-tests/" + NameCodec.encode(name);
        Map<String, Integer> counts = new HashMap<>();
        String current = null;
        for (String line : ZkServers.fourLetters(server.getPort(), "wchp").split("\n")) {
            if (line.startsWith("/")) {
                current = line.trim();
            } else if (current != null && current.startsWith(parent) && line.trim().startsWith("0x")) {
                counts.merge(current, 1, Integer::sum);
            }
        }
        return counts;
    }

    @Test
    void capabilitiesAndSessionBoundLeases() {
        ZkBackend b = backend(null);
        assertTrue(b.capabilities().containsAll(List.of(Capability.FENCING, Capability.FAIR, Capability.NOTIFY_WAITERS,
                Capability.HOLDER_QUERY, Capability.SURVIVES_SERVER_FAILOVER)));
        assertEquals(Harness.SESSION, b.maximumLeaseTime(), "the negotiated session timeout bounds leases");
        LockClient c = client();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> c.lock("x", LockOptions.builder().leaseTime(Duration.ofSeconds(4)).build()));
        assertTrue(e.getMessage().contains("leaseTime"), e.getMessage());
        c.lock("x", LockOptions.builder().leaseTime(Harness.SESSION).build()); // equal is fine
    }

    @Test
    void serverClampsTheSessionAndTheLeaseBoundFollows() {
        // the server allows at most 20 ticks = 4 s
        ZkBackend b = Harness.open("zookeeper://127.0.0.1:" + server.getPort() + "?sessionTimeout=PT30S", new Events());
        toClose.add(b);
        assertEquals(Duration.ofMillis(20L * ZkServers.TICK_MS), b.maximumLeaseTime());
        // a longer lease is the caller's mistake, as on every backend: IllegalArgumentException, before any I/O
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> b.newAttempt(new AcquireRequest(name("long"), Harness.newOwner(), Duration.ofSeconds(5))));
        assertTrue(e.getMessage().contains("leaseTime") && e.getMessage().contains("sessionTimeout"), e.getMessage());
    }

    @Test
    void everyCallFailsWithinTheOperationTimeoutWhenTheNetworkStalls() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(new InetSocketAddress("127.0.0.1", server.getPort()))) {
            Events events = new Events();
            ZkBackend b = Harness.open(Harness.uri(proxy.address().getPort(), null, "prefix=t7"), events);
            toClose.add(b);
            String name = name("frozen");
            Grant<ZkGrant> held = acquire(b, name, Duration.ZERO);
            proxy.freeze();
            // generous: one operation timeout, plus a second for scheduling on a loaded machine
            long bound = OP_TIMEOUT.plusSeconds(1).toNanos();
            List<Runnable> calls = List.of(
                    () -> b.newAttempt(new AcquireRequest(name("frozen-2"), Harness.newOwner(), LEASE)).tryOnce(),
                    () -> b.holder(name),
                    () -> renewed(b.renew(List.of(held))),
                    () -> released(b.release(held)));
            for (Runnable call : calls) {
                long t0 = System.nanoTime();
                assertThrows(LockBackendException.class, call::run);
                long took = System.nanoTime() - t0;
                assertTrue(took < bound, "a call over a stalled network took " + took / 1_000_000 + " ms");
            }
            proxy.unfreeze();
            // the failed release is retried once the connection is back: nothing stays held
            String path = held.state().path;
            assertTrue(eventually(() -> {
                try {
                    return raw.checkExists().forPath(path) == null;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, Duration.ofSeconds(15)), "the node whose release failed was deleted later");
            assertNotNull(acquire(b, name, Duration.ofSeconds(10)), "the client works again");
        }
    }

    @Test
    void closeFailsPendingWaitsAndTheClosedBackendRefusesWork() throws Exception {
        ZkBackend a = backend("prefix=t8");
        ZkBackend c = Harness.open(Harness.uri(server.getPort(), null, "prefix=t8"), new Events());
        String name = name("close");
        Grant<ZkGrant> held = acquire(a, name, Duration.ZERO);
        CountDownLatch started = new CountDownLatch(1);
        long[] returnedAfter = new long[1];
        Thread waiter = new Thread(() -> {
            AcquireAttempt<ZkGrant> at = c.newAttempt(new AcquireRequest(name, Harness.newOwner(), LEASE));
            try {
                AttemptResult<ZkGrant> r = at.tryOnce();
                assertFalse(isGranted(r));
                started.countDown();
                long t0 = System.nanoTime();
                awaitTurn(at, Duration.ofSeconds(20));
                returnedAfter[0] = System.nanoTime() - t0;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                at.abandon();
            }
        });
        waiter.start();
        assertTrue(started.await(10, TimeUnit.SECONDS));
        Thread.sleep(200);
        c.close();
        waiter.join(10_000);
        assertFalse(waiter.isAlive());
        // generous: closing wakes the wait at once; 5 s is far below the 20 s it asked for
        assertTrue(returnedAfter[0] < TimeUnit.SECONDS.toNanos(5), "close woke the waiter");
        assertThrows(LockBackendException.class, () -> c.holder(name));
        assertEquals(held.ownerId(), a.holder(name).orElseThrow().ownerId(), "the other client's lock is untouched");
    }
}
