package io.dlock.zookeeper.internal;

import static io.dlock.zookeeper.internal.Harness.eventually;
import static io.dlock.zookeeper.internal.Harness.name;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockLostException;
import io.dlock.LostReason;
import io.dlock.tck.TcpProxy;
import io.dlock.zookeeper.ZkServers;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.test.KillSession;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The lease is the session: expiry and suspension end every lease, and a reconnection revives none. */
class SessionRuleTest extends EmbeddedServerTest {

    @AfterEach
    void closeClients() throws Exception {
        closeRegistered();
    }

    private String uri(int port) {
        return Harness.uri(port, null, "prefix=session-tests");
    }

    /**
     * Session expiry as {@link KillSession} injects it: the client is told its session expired, reports
     * every lease lost, carries on with a new session, and deletes the old node, so the lock passes on.
     * (KillSession acts on the client only, and Curator then closes the old session on the server, which
     * can delete the node a few milliseconds before the holder is told: an artifact of the injection,
     * as a real expiry needs a silence of a whole session, which suspends the holder first. The ordering
     * under a real, server-side expiry is checked by {@link #serverSideExpiryIsReportedBeforeTheLockMoves}.)
     */
    @Test
    void sessionExpiryReportsEveryLeaseLostAndTheClientCarriesOn() throws Exception {
        Harness.Capturing provider = new Harness.Capturing();
        LockClient holder = Harness.client(uri(server.getPort()), provider);
        toClose.add(holder);
        LockClient other = Harness.client(uri(server.getPort()));
        toClose.add(other);
        String name = name("expiry");
        Lease lease = holder.lock(name).tryAcquire().orElseThrow();
        Lease second = holder.lock(name("expiry-second")).tryAcquire().orElseThrow();
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        lease.onLost(lost::complete);
        CompletableFuture<Optional<Lease>> taken = other.lock(name).acquireAsync(Duration.ofSeconds(30));
        assertTrue(eventually(() -> children(name) == 2, Duration.ofSeconds(10)), "the other client queued");
        ZooKeeper zk = provider.backend.get().cf.getZookeeperClient().getZooKeeper();
        long oldSession = zk.getSessionId();
        KillSession.kill(zk);

        assertEquals(LostReason.SESSION_LOST, lost.get(10, TimeUnit.SECONDS).reason());
        assertFalse(lease.isValid());
        assertFalse(second.isValid(), "every lease of the client is lost, not only the contended one");
        assertThrows(LockLostException.class, lease::ensureValid);
        // generous: the old node goes when the client deletes it on its new session (milliseconds), at the
        // latest when the server expires the old session (3 s)
        Lease next = taken.get(15, TimeUnit.SECONDS).orElseThrow();
        assertTrue(next.fencingToken() > lease.fencingToken(), "the next grant has a larger token");
        next.release();

        Lease again = holder.lock(name("after-expiry")).tryAcquire(Duration.ofSeconds(10)).orElseThrow();
        assertNotEquals(oldSession, provider.backend.get().cf.getZookeeperClient().getZooKeeper().getSessionId(),
                "the client carries on with a new session");
        again.release();
    }

    /** S7 for ZooKeeper: a silent holder's session expires on the server; the holder hears first. */
    @Test
    void serverSideExpiryIsReportedBeforeTheLockMoves() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(new InetSocketAddress("127.0.0.1", server.getPort()))) {
            LockClient holder = Harness.client(uri(proxy.address().getPort()));
            toClose.add(holder);
            LockClient other = Harness.client(uri(server.getPort()));
            toClose.add(other);
            String name = name("server-expiry");
            Lease lease = holder.lock(name).tryAcquire().orElseThrow();
            AtomicLong lostAt = new AtomicLong();
            lease.onLost(e -> lostAt.set(System.nanoTime()));
            long frozenAt = System.nanoTime();
            proxy.freeze(); // nothing reaches the server: it expires the session after 3 s of silence
            Lease next = other.lock(name).tryAcquire(Duration.ofSeconds(20)).orElseThrow();
            long takenAt = System.nanoTime();
            assertTrue(lostAt.get() != 0 && lostAt.get() - takenAt < 0, "onLost fired before the lock moved");
            assertFalse(lease.isValid());
            // the lock moves only when the server expires the session; half a session is a safe lower bound
            assertTrue(takenAt - frozenAt > Harness.SESSION.toNanos() / 2, "moved after "
                    + TimeUnit.NANOSECONDS.toMillis(takenAt - frozenAt) + " ms");
            assertTrue(next.fencingToken() > lease.fencingToken());
            System.out.println("[zk] server-side expiry: lost " + TimeUnit.NANOSECONDS.toMillis(lostAt.get() - frozenAt)
                    + " ms after the freeze, lock moved " + TimeUnit.NANOSECONDS.toMillis(takenAt - frozenAt) + " ms after");
            next.release();
            proxy.unfreeze();
        }
    }

    /**
     * The session rule: a suspension ends every lease for good. When the connection comes back within
     * the same session, the lease stays lost and its node is deleted, so the next waiter gets the lock
     * without waiting for a session expiry that will never come.
     */
    @Test
    void aReconnectionWithinTheSessionDoesNotResurrectALostLease() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(new InetSocketAddress("127.0.0.1", server.getPort()))) {
            Harness.Capturing provider = new Harness.Capturing();
            LockClient holder = Harness.client(uri(proxy.address().getPort()), provider);
            toClose.add(holder);
            LockClient waiter = Harness.client(uri(server.getPort()));
            toClose.add(waiter);
            String name = name("reconnect");
            Lease lease = holder.lock(name).tryAcquire().orElseThrow();
            String parent = "/session-tests/" + NameCodec.encode(name);
            String node = parent + "/" + raw.getChildren().forPath(parent).stream()
                    .filter(c -> c.startsWith(LockNode.namePrefix(lease.ownerId()))).findFirst().orElseThrow();
            AtomicReference<LockLostException> event = new AtomicReference<>();
            lease.onLost(event::set);
            long session = provider.backend.get().cf.getZookeeperClient().getZooKeeper().getSessionId();
            CompletableFuture<Optional<Lease>> taken = waiter.lock(name).acquireAsync(Duration.ofSeconds(30));
            Thread.sleep(200); // the waiter is queued behind the holder

            long cutAt = System.nanoTime();
            proxy.cutConnections(); // the holder's TCP connection breaks; the proxy accepts the reconnection

            Lease next = taken.get(30, TimeUnit.SECONDS).orElseThrow();
            long takenAfter = System.nanoTime() - cutAt;
            assertEquals(session, provider.backend.get().cf.getZookeeperClient().getZooKeeper().getSessionId(),
                    "the holder reconnected within its session");
            assertFalse(lease.isValid(), "the lease stays lost after the reconnection");
            assertEquals(LostReason.SESSION_LOST, event.get().reason());
            assertNull(raw.checkExists().forPath(node), "the lost lease's node was deleted");
            // the session survived (asserted above), so no expiry removed the node: the holder deleted it itself
            System.out.println("[zk] reconnect: handed over " + TimeUnit.NANOSECONDS.toMillis(takenAfter)
                    + " ms after the holder's connection was cut");
            assertEquals(next.ownerId(), holder.holder(name).orElseThrow().ownerId(), "the reconnected client sees the new holder");
            next.release();
            Lease again = holder.lock(name).tryAcquire(Duration.ofSeconds(10)).orElseThrow();
            assertTrue(again.isValid() && again.fencingToken() > next.fencingToken(), "a fresh lease, a larger token");
            again.release();
        }
    }

    @Test
    void aSuspendedWaiterKeepsItsPlaceIfTheSessionSurvives() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(new InetSocketAddress("127.0.0.1", server.getPort()))) {
            LockClient holder = Harness.client(uri(server.getPort()));
            toClose.add(holder);
            LockClient waiter = Harness.client(uri(proxy.address().getPort()));
            toClose.add(waiter);
            String name = name("ride-out");
            Lease held = holder.lock(name).tryAcquire().orElseThrow();
            CompletableFuture<Optional<Lease>> taken = waiter.lock(name).acquireAsync(Duration.ofSeconds(30));
            // the waiter is queued and watching the holder's node (so its create was answered, too)
            assertTrue(eventually(() -> ZkServers.fourLetters(server.getPort(), "wchp")
                    .contains("/session-tests/" + NameCodec.encode(name) + "/"), Duration.ofSeconds(10)));
            // the waiter's connection breaks, and its reconnection stalls for 1.2 s: longer than the operation
            // timeout, so its attempts fail meanwhile, but shorter than the 3 s session, which survives
            proxy.freeze();
            proxy.cutConnections();
            Thread.sleep(1200);
            held.release(); // released during the outage
            proxy.unfreeze();
            Lease got = taken.get(30, TimeUnit.SECONDS).orElseThrow();
            assertTrue(got.isValid(), "the waiter rode out the outage and got the lock");
            got.release();
        }
    }

    private int children(String name) {
        try {
            return raw.getChildren().forPath("/session-tests/" + NameCodec.encode(name)).size();
        } catch (Exception e) {
            return -1;
        }
    }
}
