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

import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.spi.Grant;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.tck.TcpProxy;
import io.dlock.zookeeper.internal.Harness.Events;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;

/**
 * What each operation costs in round trips, counted at a {@link TcpProxy} between the client and
 * a real server, and the failure paths of the pipelined create-and-list and of the watch-based
 * renewal.
 */
class RoundTripTest extends EmbeddedServerTest {

    /** A proxy of its own for each counted client, so that other clients' pings are not counted. */
    private TcpProxy proxy() {
        TcpProxy p = TcpProxy.start(new InetSocketAddress("127.0.0.1", server.getPort()));
        toClose.add(p);
        return p;
    }

    private ZkBackend backend(TcpProxy proxy, String extra) {
        ZkBackend b = Harness.open(Harness.uri(proxy.address().getPort(), null, extra), new Events());
        toClose.add(b);
        return b;
    }

    private ZkBackend backend(String extra) {
        ZkBackend b = Harness.open(Harness.uri(server.getPort(), null, extra), new Events());
        toClose.add(b);
        return b;
    }

    /** Lets in-flight bytes reach the proxy before it is read. */
    private static void settle() throws InterruptedException {
        Thread.sleep(150);
    }

    @Test
    void anUncontendedAcquireAndReleaseIsTwoRoundTrips() throws Exception {
        TcpProxy proxy = proxy();
        LockClient client = Harness.client(Harness.uri(proxy.address().getPort(), null, "prefix=rt1"));
        toClose.add(client);
        String name = name("uncontended");
        client.lock(name).tryAcquire().orElseThrow().release(); // creates the parents
        int cycles = 50;
        settle();
        long before = proxy.roundTrips();
        for (int i = 0; i < cycles; i++) {
            Lease lease = client.lock(name).tryAcquire().orElseThrow();
            lease.release();
        }
        settle();
        long trips = proxy.roundTrips() - before;
        // one for the create pipelined with the listing, one for the delete; the slack is for a session
        // ping, or a pipelined pair the client happened to write in two bursts on a busy machine
        assertTrue(trips >= 2L * cycles && trips <= 2L * cycles + 5,
                "round trips for " + cycles + " uncontended cycles: " + trips + " (expected " + 2 * cycles + ")");
    }

    @Test
    void aNameNeverUsedCostsOneMoreRoundTripWhateverItsDepth() throws Exception {
        // neither the prefix (three segments) nor the per-name parent exists yet
        TcpProxy proxy = proxy();
        ZkBackend b = backend(proxy, "prefix=rt2/a/b");
        String name = name("fresh");
        settle();
        long before = proxy.roundTrips();
        Grant<ZkGrant> held = acquire(b, name, Duration.ZERO);
        assertNotNull(held);
        settle();
        long trips = proxy.roundTrips() - before;
        assertTrue(trips >= 2 && trips <= 3, "a first acquire on a new name took " + trips + " round trips, expected 2");
        String path = held.state().path;
        String parent = ZkBackend.parentOf(path);
        for (String p : List.of("/rt2", "/rt2/a", "/rt2/a/b", parent)) {
            assertNotNull(raw.checkExists().forPath(p), p);
        }
        assertTrue(released(b.release(held)));
        assertNull(raw.checkExists().forPath(path));
        // every node made on the way is a container: the server removes them all once they are empty
        assertTrue(eventually(() -> {
            try {
                return raw.checkExists().forPath("/rt2") == null;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, Duration.ofSeconds(20)), "the parents made for the first acquire were containers");
    }

    @Test
    void aParentDeletedUnderAnIdleNameIsCreatedAgain() throws Exception {
        ZkBackend b = backend("prefix=rt3");
        String name = name("recreate");
        Grant<ZkGrant> held = acquire(b, name, Duration.ZERO);
        String parent = ZkBackend.parentOf(held.state().path);
        assertTrue(released(b.release(held)));
        raw.delete().forPath(parent); // as the server does with an empty container
        raw.delete().forPath("/rt3");
        Grant<ZkGrant> again = acquire(b, name, Duration.ZERO);
        assertNotNull(again, "granted under re-created parents");
        assertTrue(again.fencingToken() > held.fencingToken(), "tokens still increase");
        assertTrue(released(b.release(again)));
    }

    @Test
    void aWaiterQueuesBehindTheHolderInTheSameRoundTrip() throws Exception {
        ZkBackend a = backend("prefix=rt4");
        TcpProxy proxy = proxy();
        ZkBackend c = backend(proxy, "prefix=rt4");
        String name = name("queued");
        Grant<ZkGrant> held = acquire(a, name, Duration.ZERO);
        AcquireAttempt<ZkGrant> waiting = c.newAttempt(new AcquireRequest(name, Harness.newOwner(), LEASE));
        settle();
        long before = proxy.roundTrips();
        assertFalse(isGranted(waiting.tryOnce()), "the listing pipelined with the create shows the holder first");
        settle();
        assertEquals(1, proxy.roundTrips() - before, "a queued create and its listing are one round trip");
        released(a.release(held));
        assertTrue(eventually(() -> {
            try {
                return isGranted(waiting.tryOnce());
            } catch (LockBackendException e) {
                return false;
            }
        }, Duration.ofSeconds(10)), "the waiter gets the lock after the release");
    }

    @Test
    void aRenewalIsOneRequestHoweverManyLocksItRenews() throws Exception {
        TcpProxy proxy = proxy();
        ZkBackend b = backend(proxy, "prefix=rt5");
        List<Grant<ZkGrant>> held = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            held.add(acquire(b, name("renew"), Duration.ZERO));
        }
        boolean[] all = new boolean[held.size()];
        java.util.Arrays.fill(all, true);
        assertArrayEquals(all, renewed(b.renew(held)), "the first renewal reads each node once, with a watch");
        int renewals = 20;
        settle();
        long before = proxy.roundTrips();
        for (int i = 0; i < renewals; i++) {
            assertArrayEquals(all, renewed(b.renew(held)));
        }
        settle();
        long trips = proxy.roundTrips() - before;
        // the slack is for a session ping
        assertTrue(trips >= renewals && trips <= renewals + 2,
                renewals + " renewals of " + held.size() + " locks took " + trips + " round trips, expected " + renewals);
        for (Grant<ZkGrant> h : held) {
            assertTrue(released(b.release(h)));
        }
    }

    @Test
    void aNodeDeletedBeforeOrAfterItsWatchIsSetIsNotRenewed() throws Exception {
        ZkBackend b = backend("prefix=rt6");
        Grant<ZkGrant> early = acquire(b, name("early"), Duration.ZERO);
        Grant<ZkGrant> late = acquire(b, name("late"), Duration.ZERO);
        Grant<ZkGrant> kept = acquire(b, name("kept"), Duration.ZERO);
        raw.delete().forPath(early.state().path); // before any renewal: no watch yet
        assertArrayEquals(new boolean[] {false, true, true}, renewed(b.renew(List.of(early, late, kept))));
        raw.delete().forPath(late.state().path); // seen by the watch
        assertArrayEquals(new boolean[] {false, true}, renewed(b.renew(List.of(late, kept))));
        assertTrue(released(b.release(kept)));
        assertArrayEquals(new boolean[] {false}, renewed(b.renew(List.of(kept))), "a released lock is not renewed");
    }

    @Test
    void aCreateWithoutAnAnswerFailsInTimeAndLeavesNothingBehind() throws Exception {
        try (TcpProxy own = TcpProxy.start(new InetSocketAddress("127.0.0.1", server.getPort()))) {
            ZkBackend b = Harness.open(Harness.uri(own.address().getPort(), null, "prefix=rt7"), new Events());
            toClose.add(b);
            String name = name("stalled");
            Grant<ZkGrant> first = acquire(b, name, Duration.ZERO); // the parents exist; the next create is pipelined at once
            assertTrue(released(b.release(first)));
            String parent = ZkBackend.parentOf(first.state().path);
            raw.create().withMode(CreateMode.EPHEMERAL).forPath(parent + "/keep"); // keeps the container
            own.freeze();
            AcquireAttempt<ZkGrant> attempt = b.newAttempt(new AcquireRequest(name, Harness.newOwner(), LEASE));
            long t0 = System.nanoTime();
            assertThrows(LockBackendException.class, attempt::tryOnce);
            long took = System.nanoTime() - t0;
            assertTrue(took < OP_TIMEOUT.plusSeconds(1).toNanos(), "failed after " + took / 1_000_000 + " ms");
            attempt.abandon();
            own.unfreeze(); // the held-back create may land now; the sweep must delete it
            assertTrue(eventually(() -> {
                try {
                    return raw.getChildren().forPath(parent).equals(List.of("keep"));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, Duration.ofSeconds(20)), "no lock node of the failed attempt stays queued");
            assertNotNull(acquire(b, name, Duration.ofSeconds(10)), "the name is free");
            raw.delete().forPath(parent + "/keep");
        }
    }
}
