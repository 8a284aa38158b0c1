package io.dlock.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import io.dlock.tck.ClusterControl;
import io.dlock.tck.HoldLog;
import io.dlock.tck.TckSupport;
import io.dlock.tck.NetworkNamespaces;
import io.dlock.tck.TestTiming;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A member of a 3-member ensemble cut off from its peers while clients still reach it: a real
 * partition of the peer network (each member in its own Linux network namespace, see
 * {@link ZkEnsemble}), so it needs root; elsewhere these tests are skipped. Timings are the TCK
 * fault tier's: 3 s sessions and leases, 1 s operation timeout, 200 ms ticks with
 * {@code syncLimit} 3.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ZooKeeperPartitionTest {

    private static final Duration SESSION = ZooKeeperFixture.SESSION;
    private static final Duration LEASE = SESSION;
    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    /** The seed of the churn tests\' fault timing and hold times: the TCK\'s, printed with the results. */
    private static final long SEED = Long.getLong("dlock.tck.seed", TckSupport.DEFAULT_SEED);

    private static ZkEnsemble zk;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @BeforeAll
    static void startEnsemble() {
        assumeTrue(NetworkNamespaces.available(), "cutting a member off from its peers needs Linux network namespaces "
                + "(root, unshare, nsenter, ip)");
        zk = ZkEnsemble.start(3);
        assertTrue(zk.canIsolate(), "the ensemble runs in network namespaces");
    }

    @AfterEach
    void closeClients() throws Exception {
        if (zk != null) {
            zk.heal();
        }
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        toClose.clear();
    }

    @AfterAll
    static void stopEnsemble() {
        if (zk != null) {
            zk.close();
        }
    }

    /** A client whose URI lists every member (ZooKeeper picks among them at random). */
    private LockClient client() {
        LockClient c = LockClient.open(LockClientConfig.builder("zookeeper://" + zk.connectString()
                        + "/partition?sessionTimeout=" + SESSION).operationTimeout(TIMEOUT)
                .defaultLockOptions(LockOptions.builder().leaseTime(LEASE).build())
                .retry(Duration.ofMillis(10), Duration.ofMillis(250)).build());
        toClose.add(c);
        return c;
    }

    private LockClient clientOpenedAgainUntilItConnects() {
        return openAgainUntilItConnects(this::client);
    }

    private static LockClient openAgainUntilItConnects(java.util.function.Supplier<LockClient> open) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        List<String> failures = new ArrayList<>();
        while (true) {
            try {
                LockClient c = open.get();
                System.out.println("[dlock-zk] a client opened during the partition after " + failures.size()
                        + " failed open(s)");
                return c;
            } catch (io.dlock.LockBackendException e) {
                failures.add(e.getMessage());
                if (System.nanoTime() - deadline >= 0) {
                    throw new AssertionError("no client could open within 10 s during the partition: " + failures, e);
                }
            }
        }
    }

    /** @return how many client sessions a member serves now (the {@code cons} command) */
    private static int sessionsOn(int member) {
        Matcher m = Pattern.compile("sid=0x").matcher(ZkServers.fourLetters(zk.member(member).clientPort, "cons"));
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    private static String name(String prefix) {
        return prefix + "-" + System.nanoTime();
    }

    private static int follower() {
        return (zk.awaitLeader(-1) + 1) % zk.size();
    }

    @Test
    void clientsKeepAcquiringThroughTheOthersWhileTheLeaderIsCutOffFromItsPeers() throws Exception {
        acquireWhileIsolated(true);
    }

    @Test
    void clientsKeepAcquiringThroughTheOthersWhileAFollowerIsCutOffFromItsPeers() throws Exception {
        acquireWhileIsolated(false);
    }

    private void acquireWhileIsolated(boolean leader) throws Exception {
        int victim = leader ? zk.awaitLeader(-1) : follower();
        // clients of every member; ZooKeeper picks a member at random, so open clients until one
        // has its session on the member to be cut off (that is the client the cut is about)
        LockClient onVictim = null;
        List<LockClient> elsewhere = new ArrayList<>();
        for (int i = 0; i < 16 && (onVictim == null || elsewhere.size() < 3); i++) {
            int before = sessionsOn(victim);
            LockClient c = client();
            if (onVictim == null && sessionsOn(victim) > before) {
                onVictim = c;
            } else if (elsewhere.size() < 3) {
                elsewhere.add(c);
            }
        }
        assertTrue(onVictim != null, "no client got a session on member " + victim + " in 16 tries");
        assertEquals(3, elsewhere.size(), "three clients with their sessions on the other members");
        String name = name("isolated-" + (leader ? "leader" : "follower"));
        Contention baseline = new Contention(name);
        baseline.join(List.of(onVictim, elsewhere.get(1), elsewhere.get(2)));
        TestTiming.sleep(2000);
        Cycles before = baseline.stop();
        assertTrue(before.failures.isEmpty(), "failures with nothing cut off: " + before.failures);

        // the client on the member to be cut off holds a lock that another client awaits: the holder
        // must be told it lost its lease before the other one gets it
        String held = name("held");
        Lease holder = onVictim.lock(held).tryAcquire(TIMEOUT).orElseThrow();
        AtomicLong lostAt = new AtomicLong();
        holder.onLost(e -> lostAt.set(System.nanoTime()));
        AtomicLong takenAt = new AtomicLong();
        CompletableFuture<Optional<Lease>> next = elsewhere.get(0).lock(held).acquireAsync(Duration.ofSeconds(30))
                .whenComplete((l, e) -> takenAt.set(System.nanoTime()));
        // and the same clients contend for another lock, across the cut
        Contention contention = new Contention(name);
        contention.join(List.of(onVictim, elsewhere.get(1), elsewhere.get(2)));
        TestTiming.sleep(1000);
        long cutAt = System.nanoTime();
        contention.cutAt = cutAt;
        Cycles during;
        long shownAt;
        try {
            zk.isolate(victim);
            shownAt = System.nanoTime();
            assertIsolated(victim);
            // and one client that starts during the partition; ZooKeeper tries its hosts in random order,
            // each for a third of the session, so an open that first meets the cut-off member can outlast the
            // 1 s operation timeout: an application opens again, and so does this test, for up to 10 s
            contention.join(List.of(clientOpenedAgainUntilItConnects()));
            // contention goes on for two sessions after the cut: a client stuck on the cut-off
            // member would get nothing in that time
            TestTiming.sleep(Math.max(0, SESSION.multipliedBy(2).toMillis() - millis(System.nanoTime() - cutAt)));
            assertEquals(Collections.singleton(victim), zk.isolated(), "the member was cut off all along");
            assertEquals("not serving", zk.member(victim).mode(), "the cut-off member answers, and serves no one");
            during = contention.stop();
            Lease taken = next.get(30, TimeUnit.SECONDS).orElseThrow(() -> new AssertionError("the awaited lock "
                    + "was not granted within 30 s of the cut"));
            System.out.println("[dlock-zk] partition, " + (leader ? "leader " : "follower ") + zk.member(victim)
                    + " cut off (shown after " + millis(shownAt - cutAt) + " ms): " + during.log.holds().size()
                    + " proven holds by 4 clients, " + during.grantsAfterCut + " grants after the cut, "
                    + during.backendErrors + " LockBackendExceptions retried; acquire ms (first try to grant) median "
                    + during.median() + ", max " + during.max() + " (nothing cut off: median " + before.median()
                    + ", max " + before.max() + "); holder on the cut-off member told of the loss "
                    + (lostAt.get() == 0 ? "never" : millis(lostAt.get() - cutAt) + " ms") + " after the cut, its lock "
                    + "granted to a waiter " + millis(takenAt.get() - cutAt) + " ms after the cut");
            assertTrue(during.failures.isEmpty(), during.failures.size() + " acquires failed across the cut; the first "
                    + "ones: " + during.failures.subList(0, Math.min(4, during.failures.size())));
            // the bound on one acquire, retries after LockBackendException included: a client on
            // the cut-off member is dropped by it once it has missed its leader (or its quorum)
            // for syncLimit ticks (600-800 ms), or, failing that, gives up on the connection itself
            // after two thirds of the session (2 s); it then tries the members in turn, each
            // connect bounded by a third of the session (1 s; the cut-off member refuses at once);
            // an election takes up to another second; then it waits in a queue of at most four
            // others holding 20 ms each, with the core's 250 ms retry cap. About 5 s in all;
            // twice that for a loaded machine.
            assertTrue(during.max() <= BOUND.toMillis(), "an acquire took " + during.max() + " ms");
            for (int i = 0; i < during.grantsAfterCutPerClient.size(); i++) {
                assertTrue(during.grantsAfterCutPerClient.get(i) > 0, "client " + i + " got the lock after the cut");
            }
            during.log.overlap().ifPresent(o -> fail("two proven holds overlap: " + o));
            during.log.tokenRegression().ifPresent(r -> fail("tokens went backwards: " + r));
            assertTrue(lostAt.get() != 0 && lostAt.get() - takenAt.get() < 0, "the holder on the cut-off member was "
                    + "told of its loss before its lock went to another client");
            assertFalse(holder.isValid(), "the holder on the cut-off member keeps no valid lease");
            assertTrue(taken.fencingToken() > holder.fencingToken(), "tokens increase across the cut");
            taken.release();
        } finally {
            contention.stop();
            zk.heal();
        }
        // once healed, the lock is granted again within two lease times plus the operation
        // timeout (the TCK's N2 promise), plus 500 ms for the fresh client's retry cap
        long healedAt = System.nanoTime();
        Duration promise = LEASE.multipliedBy(2).plus(TIMEOUT).plusMillis(500);
        LockClient fresh = client();
        Lease again = fresh.lock(name).tryAcquire(promise).orElseThrow(() -> new AssertionError(
                "no grant within " + promise.toMillis() + " ms after the ensemble healed"));
        System.out.println("[dlock-zk] after healing: lock granted again after " + millis(System.nanoTime() - healedAt)
                + " ms");
        again.release();
    }

    /**
     * The cut is real: the member still answers its clients (a four-letter word through its
     * client port) but serves no session, and a client of that member alone cannot write, while
     * the others have a leader and commit.
     */
    private void assertIsolated(int victim) throws Exception {
        String srvr = zk.member(victim).srvr();
        assertFalse(srvr.isEmpty(), "the cut-off member answers on its client port");
        assertTrue(srvr.contains("not currently serving"), "the cut-off member serves no session: " + srvr);
        List<Integer> others = new ArrayList<>();
        for (int i = 0; i < zk.size(); i++) {
            if (i != victim) {
                others.add(i);
            }
        }
        assertTrue(others.contains(zk.leader()), "the others have a leader: " + zk.modes());
        String path = "/" + name("partition-probe");
        ZooKeeper alone = new ZooKeeper("127.0.0.1:" + zk.member(victim).clientPort, (int) SESSION.toMillis(), e -> { });
        toClose.add(alone::close);
        assertNotEquals(KeeperException.Code.OK, create(alone, path), "a write through the cut-off member alone "
                + "was committed");
        ZooKeeper rest = new ZooKeeper(others.stream().map(i -> "127.0.0.1:" + zk.member(i).clientPort)
                .collect(Collectors.joining(",")), (int) SESSION.toMillis(), e -> { });
        toClose.add(rest::close);
        assertEquals(KeeperException.Code.OK, create(rest, path), "the members that keep a quorum commit");
        rest.delete(path, -1);
    }

    /**
     * Creates a node, trying again after each connection loss (a client without a session fails
     * its queued requests whenever a connection ends) until 5 s have passed.
     *
     * @return the answer's code, or CONNECTIONLOSS if no other came within 5 s
     */
    private static KeeperException.Code create(ZooKeeper client, String path) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        KeeperException.Code last = KeeperException.Code.CONNECTIONLOSS;
        while (System.nanoTime() - deadline < 0) {
            CompletableFuture<Integer> rc = new CompletableFuture<>();
            client.create(path, "v".getBytes(StandardCharsets.UTF_8), ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.PERSISTENT, (code, p, ctx, created) -> rc.complete(code), null);
            try {
                last = KeeperException.Code.get(rc.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
            } catch (java.util.concurrent.TimeoutException e) {
                return last;
            }
            if (last != KeeperException.Code.CONNECTIONLOSS) {
                return last;
            }
            TestTiming.sleep(100);
        }
        return last;
    }

    /** The longest one acquire may take, retries included; the reason is at its assertion. */
    private static final Duration BOUND = Duration.ofSeconds(10);
    private static final Duration WAIT = Duration.ofSeconds(8);

    /** What a {@link Contention} saw. */
    private record Cycles(HoldLog log, List<String> failures, List<Long> acquireMillis, int backendErrors,
                          int grantsAfterCut, List<Integer> grantsAfterCutPerClient) {
        long median() {
            List<Long> sorted = new ArrayList<>(acquireMillis);
            Collections.sort(sorted);
            return sorted.isEmpty() ? -1 : sorted.get(sorted.size() / 2);
        }

        long max() {
            return acquireMillis.stream().mapToLong(Long::longValue).max().orElse(-1);
        }
    }

    /**
     * Clients that, each on its own thread, acquire one lock, hold it 20 ms and release it, until
     * stopped. An acquire that fails with {@link LockBackendException} (the client's member was
     * cut off, its connection moves) is tried again until it has lasted {@link #BOUND}, after
     * which it counts as a failure.
     */
    private static final class Contention {
        private final String name;
        private final HoldLog log = new HoldLog();
        private final List<String> failures = Collections.synchronizedList(new ArrayList<>());
        private final List<Long> acquireMillis = Collections.synchronizedList(new ArrayList<>());
        private final AtomicInteger backendErrors = new AtomicInteger();
        private final List<AtomicInteger> afterCut = new ArrayList<>();
        private final List<Thread> threads = new ArrayList<>();
        private final AtomicBoolean stop = new AtomicBoolean();
        /** When the cut began (System.nanoTime()), or Long.MAX_VALUE before. */
        volatile long cutAt = Long.MAX_VALUE;

        Contention(String name) {
            this.name = name;
        }

        synchronized void join(List<LockClient> clients) {
            for (LockClient c : clients) {
                int index = threads.size();
                AtomicInteger grants = new AtomicInteger();
                afterCut.add(grants);
                Thread thread = new Thread(() -> run(c, "client " + index, grants), "test-partition-" + index);
                threads.add(thread);
                thread.start();
            }
        }

        private void run(LockClient c, String who, AtomicInteger grantsAfterCut) {
            while (!stop.get()) {
                long start = System.nanoTime();
                Optional<Lease> lease = Optional.empty();
                String last = "no grant within " + WAIT.toMillis() + " ms";
                while (lease.isEmpty() && !stop.get() && System.nanoTime() - start < BOUND.toNanos()) {
                    try {
                        lease = c.lock(name).tryAcquire(WAIT);
                    } catch (LockBackendException e) {
                        backendErrors.incrementAndGet();
                        last = e.toString();
                        TestTiming.sleep(50);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        failures.add(who + " interrupted");
                        return;
                    } catch (RuntimeException e) {
                        failures.add(who + ": " + e);
                        return;
                    }
                }
                long took = millis(System.nanoTime() - start);
                if (lease.isEmpty()) {
                    if (!stop.get()) {
                        failures.add(who + ": nothing granted in " + took + " ms; last: " + last);
                    }
                    continue;
                }
                acquireMillis.add(took);
                try (Lease l = lease.get()) {
                    long in = log.enter(l);
                    if (in - cutAt > 0) {
                        grantsAfterCut.incrementAndGet();
                    }
                    TestTiming.sleep(20);
                    log.exit(who, l, in);
                }
            }
        }

        synchronized Cycles stop() throws InterruptedException {
            stop.set(true);
            for (Thread thread : threads) {
                thread.join(60_000);
                assertFalse(thread.isAlive(), thread.getName() + " did not finish");
            }
            List<Integer> perClient = afterCut.stream().map(AtomicInteger::get).collect(Collectors.toList());
            return new Cycles(log, List.copyOf(failures), List.copyOf(acquireMillis), backendErrors.get(),
                    perClient.stream().mapToInt(Integer::intValue).sum(), perClient);
        }
    }

    @Test
    void theTckFixtureCutsOffTheLeaderAndThenAFollowerAndHeals() throws Exception {
        try (ZooKeeperClusterFixture fixture = new ZooKeeperClusterFixture()) {
            ClusterControl control = fixture.cluster().orElseThrow();
            assertTrue(control.canIsolateMembers());
            for (String expected : List.of("(the leader)", "(a follower)")) {
                String label = control.isolateMember(); // returns once the ensemble shows the cut
                assertTrue(label.endsWith(expected), label);
                // opened again until it connects, as in clientOpenedAgainUntilItConnects: ZooKeeper may try the
                // cut-off member first, for longer than the 1 s operation timeout
                LockClient c = openAgainUntilItConnects(() -> LockClient.open(fixture.clientConfig()
                        .operationTimeout(TIMEOUT).defaultLockOptions(LockOptions.builder().leaseTime(LEASE).build()).build()));
                try {
                    c.lock(name("fixture")).tryAcquire(Duration.ofSeconds(10)).orElseThrow().release();
                } finally {
                    c.close();
                }
                control.healIsolation();
            }
        }
    }

    @Test
    void grantsResumeAndNoNodeIsLeftAfterRepeatedIsolations() throws Exception {
        String name = name("churn");
        List<LockClient> clients = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            clients.add(client());
        }
        SplittableRandom random = new SplittableRandom(SEED);
        // short waits: most attempts time out in the queue and are abandoned
        io.dlock.tck.Contention contention = io.dlock.tck.Contention.start(clients, name, Duration.ofMillis(300), random.nextLong());
        List<String> cuts = new ArrayList<>();
        try {
            TestTiming.sleep(1000);
            for (int round = 0; round < 6; round++) {
                int victim = round % 2 == 0 ? follower() : zk.awaitLeader(-1);
                zk.isolate(victim);
                cuts.add("m" + victim + (round % 2 == 0 ? "(follower)" : "(leader)"));
                TestTiming.sleep(random.nextInt(1000, 2500));
                zk.heal();
                TestTiming.sleep(random.nextInt(300, 1500));
            }
        } finally {
            zk.heal();
            contention.faultsEnded();
        }
        // no fault left: the lock is granted again within two lease times plus the operation
        // timeout (the TCK's N2 promise), plus 500 ms for the contenders' retry cap
        Duration bound = LEASE.multipliedBy(2).plus(TIMEOUT).plusMillis(500);
        long firstGrantMillis = contention.awaitGrantAfterFaults(bound);
        contention.stop();
        // every contender has stopped, and every client is still open (so are its sessions): within
        // two lease times plus the operation timeout no lock node may be left in the lock's queue
        String parent = "/partition/dlock/_" + name;
        List<String> left;
        try (ZooKeeperReader reader = new ZooKeeperReader(zk.connectString())) {
            long end = System.nanoTime() + bound.toNanos();
            left = reader.children(parent);
            while (!left.isEmpty() && System.nanoTime() - end < 0) {
                TestTiming.sleep(100);
                left = reader.children(parent);
            }
        }
        System.out.println("[dlock-zk] repeated isolations (seed " + SEED + ") " + cuts + ": " + contention.summary()
                + "; first grant " + firstGrantMillis
                + " ms after the faults stopped; nodes left: " + left);
        HoldLog log = contention.log();
        log.overlap().ifPresent(o -> fail("two proven holds overlap: " + o));
        log.tokenRegression().ifPresent(r -> fail("tokens went backwards: " + r));
        assertTrue(firstGrantMillis >= 0, "no grant within " + bound.toMillis() + " ms after the faults stopped; nodes "
                + "in the queue: " + left);
        assertTrue(left.isEmpty(), "lock nodes left in the queue after every acquisition ended: " + left);
    }

    /** A plain ZooKeeper client that lists a node's children (none if the node is gone). */
    private static final class ZooKeeperReader implements AutoCloseable {
        private final ZooKeeper client;

        ZooKeeperReader(String connectString) throws Exception {
            this.client = new ZooKeeper(connectString, (int) SESSION.toMillis(), e -> { });
        }

        List<String> children(String path) throws Exception {
            try {
                return client.getChildren(path, false);
            } catch (KeeperException.NoNodeException e) {
                return List.of();
            } catch (KeeperException.ConnectionLossException e) {
                TestTiming.sleep(100);
                return children(path);
            }
        }

        @Override
        public void close() throws InterruptedException {
            client.close();
        }
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
