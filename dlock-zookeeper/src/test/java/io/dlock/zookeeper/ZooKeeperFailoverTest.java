package io.dlock.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.dlock.Capability;
import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import io.dlock.tck.HoldLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * S9 for ZooKeeper: a three-member ensemble of server processes ({@link ZkEnsemble}) loses its
 * leader (SIGKILL) while locks are held and awaited. Exclusion and token order hold, and every
 * waiter finishes.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ZooKeeperFailoverTest {

    private static final Duration LEASE = Duration.ofSeconds(2);
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        Collections.reverse(toClose);
        for (AutoCloseable c : toClose) {
            c.close();
        }
    }

    private LockClient client(String uri) {
        LockClient c = LockClient.open(LockClientConfig.builder(uri)
                .operationTimeout(Duration.ofSeconds(1))
                .defaultLockOptions(LockOptions.builder().leaseTime(LEASE).build())
                .retry(Duration.ofMillis(10), Duration.ofMillis(250))
                .build());
        toClose.add(c);
        return c;
    }

    @Test
    void leaderKilledWhileLocksAreHeldAndAwaited() throws Exception {
        ZkEnsemble cluster = ZkEnsemble.start(3);
        toClose.add(cluster);
        int oldLeader = cluster.awaitLeader(-1);
        String uri = "zookeeper://" + cluster.connectString() + "/failover?sessionTimeout=PT3S";
        List<LockClient> clients = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            clients.add(client(uri));
        }
        assertTrue(clients.get(0).capabilities().contains(Capability.SURVIVES_SERVER_FAILOVER));

        // one lock held by client 0 and awaited, in order, by clients 1 and 2
        String held = "held-" + System.nanoTime();
        Lease holder = clients.get(0).lock(held).tryAcquire().orElseThrow();
        CompletableFuture<Optional<Lease>> firstWaiter = clients.get(1).lock(held).acquireAsync(Duration.ofSeconds(60));
        Thread.sleep(200); // arrivals apart, so that the queue order is defined
        CompletableFuture<Optional<Lease>> secondWaiter = clients.get(2).lock(held).acquireAsync(Duration.ofSeconds(60));
        Thread.sleep(200);

        // and one lock contended by every client, two threads each, before, during and after the failover
        String busy = "busy-" + System.nanoTime();
        HoldLog log = new HoldLog();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger backendErrors = new AtomicInteger();
        AtomicLong killedAt = new AtomicLong(Long.MAX_VALUE);
        List<AtomicInteger> holdsAfterKill = new ArrayList<>();
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < clients.size() * 2; i++) {
            LockClient c = clients.get(i % clients.size());
            AtomicInteger after = new AtomicInteger();
            holdsAfterKill.add(after);
            String who = "client " + i % clients.size() + " thread " + i;
            Thread t = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        Optional<Lease> lease;
                        try {
                            lease = c.lock(busy).tryAcquire(Duration.ofSeconds(20));
                        } catch (LockBackendException e) {
                            backendErrors.incrementAndGet(); // the ensemble is electing: try again
                            Thread.sleep(50);
                            continue;
                        }
                        if (lease.isEmpty()) {
                            continue;
                        }
                        try (Lease l = lease.get()) {
                            long start = log.enter(l);
                            Thread.sleep(ThreadLocalRandom.current().nextInt(5, 25));
                            log.exit(who, l, start);
                            if (start > killedAt.get()) {
                                after.incrementAndGet();
                            }
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Throwable e) {
                    failures.add(e);
                }
            }, "failover-" + i);
            threads.add(t);
            t.start();
        }

        Thread.sleep(1500);
        int holdsBefore = log.holds().size();
        killedAt.set(System.nanoTime());
        cluster.member(oldLeader).kill();
        int newLeader = cluster.awaitLeader(oldLeader);
        System.out.println("[zk] failover: leader " + oldLeader + " killed, "
                + newLeader + " leads after " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt.get())
                + " ms; " + holdsBefore + " holds before");

        // the holder of the awaited lock either lost its lease with its connection or still holds it: release
        // it either way once the ensemble is back, and the waiters must finish, in order
        Thread.sleep(1000);
        boolean holderSurvived = holder.isValid();
        holder.release();
        Lease first = firstWaiter.get(30, TimeUnit.SECONDS).orElseThrow(() -> new AssertionError("first waiter timed out"));
        assertFalse(secondWaiter.isDone(), "the second waiter waits for the first (FIFO)");
        assertTrue(first.fencingToken() > holder.fencingToken(), "tokens increase across the failover");
        first.release();
        Lease second = secondWaiter.get(30, TimeUnit.SECONDS).orElseThrow(() -> new AssertionError("second waiter timed out"));
        assertTrue(second.fencingToken() > first.fencingToken(), "tokens increase across the failover");
        second.release();

        Thread.sleep(5000); // contention goes on under the new leader
        stop.set(true);
        for (Thread t : threads) {
            t.join(30_000);
            assertFalse(t.isAlive(), t.getName() + " finished");
        }
        if (!failures.isEmpty()) {
            fail("a contender failed: " + failures.get(0), failures.get(0));
        }
        log.overlap().ifPresent(o -> fail("two valid holders at once across the failover: " + o));
        log.tokenRegression().ifPresent(r -> fail("token order broken across the failover: " + r));
        for (int i = 0; i < holdsAfterKill.size(); i++) {
            assertTrue(holdsAfterKill.get(i).get() > 0, "contender " + i + " got the lock again after the failover");
        }
        System.out.println("[zk] failover: " + log.holds().size() + " proven holds (" + log.unproven()
                + " unproven), " + backendErrors.get() + " backend errors during the election, awaited lock's holder "
                + (holderSurvived ? "kept" : "lost") + " its lease");
        assertEquals(0, failures.size());
        assertNotEquals(oldLeader, newLeader);
    }
}
