package io.dlock.redis;

import static io.dlock.tck.SpiAnswers.*;

import io.dlock.tck.TestTiming;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.dlock.LockBackendException;
import io.dlock.spi.Grant;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.LockBackend;
import io.dlock.tck.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * What a Redis failover does to held locks, with and without {@code waitReplicas}: a measurement
 * against real {@code redis-server} processes, with the few properties that must hold asserted.
 * The figures are written up in {@code docs/REDIS-FAILOVER.md}.
 *
 * <p>Topology: one primary and two replicas on free loopback ports. Each replica replicates
 * through its own {@link TcpProxy}, so that its replication link can be stalled (frozen: bytes
 * are held, not delivered) and then cut (what was held is dropped), which is what a network
 * partition or the crash of the primary's host does to bytes in flight. Clients talk to the
 * servers directly.
 *
 * <p>Each round: a holder acquires a few locks through the primary and the test waits until both
 * replicas acknowledged them ("synced" grants, which also carry the fencing counter over); then,
 * depending on the round's scenario, more locks are acquired in a "window" and the primary is
 * killed (SIGKILL):
 * <ul>
 *   <li>{@code CRASH}: the holder acquires fresh names back to back and the primary is killed a
 *       few ms into that stream, links untouched: the natural replication lag, nothing injected.
 *       The replica furthest ahead is promoted, as Sentinel would.</li>
 *   <li>{@code PARTITION}: both replication links are stalled, a few locks are acquired, the
 *       primary is killed and the stalled bytes are dropped. The replica furthest ahead (they are
 *       level) is promoted.</li>
 *   <li>{@code STALE_PROMOTED}: only the second replica's link is stalled; the first replica keeps
 *       up (and acknowledges WAIT); the primary is killed and the stale second replica is
 *       promoted, as happens when the up-to-date replica is unreachable to the failover.</li>
 * </ul>
 * The promoted replica gets {@code REPLICAOF NO ONE}; the test reads what it knows, restarts the
 * old primary (empty: no persistence) as a replica of it, re-attaches the other replica, waits
 * until both are in sync, and a second client tries every name of the round on the new primary.
 * The old primary's holder is never told anything: its leases (20 s) are still valid by the
 * core's rule (sent + lease - margin) when the second client tries.
 *
 * <p>Counted per mode and scenario: grants acknowledged to the holder that the promoted replica
 * does not have (lost), names the second client got while the holder's lease was valid (exclusion
 * violated), rounds where the promoted replica's fencing counter is below a token already
 * acknowledged, tokens acknowledged twice to different owners (reissued) or not above every
 * token acknowledged before (not increasing), and acquires that failed with
 * {@link LockBackendException} because WAIT was not satisfied.
 *
 * <p>The lock-delay: by default the backend refuses grants on a server whose lock-delay marker
 * was written by another server process, for one lock-delay (30 s, above the 20 s leases), so the
 * second client is refused on a promoted replica even where it lost the holder's grant; that is
 * counted too ("held off"), and asserted: with the lock-delay, nobody else gets a lock while the
 * holder's lease is valid, in every mode (the old primary is dead before the promotion here; see
 * docs/REDIS-FAILOVER.md for what that does not cover). After the second client's tries, the new
 * primary is marked as past its lock-delay, so that the next round starts on a primary long past
 * its failover. One more mode turns the lock-delay off ({@code lockDelay=0}) to show what
 * replication alone does.
 *
 * <p>Four modes: {@code waitReplicas} 0 (the default), 1, and 2 (every replica), each with the
 * lock-delay, and {@code waitReplicas} 0 without it. Asserted,
 * because it must hold: grants both replicas acknowledged before the window survive every
 * failover and the new primary's tokens are above theirs (every mode); with {@code waitReplicas}
 * of 1 or more, when the replica furthest ahead is promoted (and with 2, whichever is promoted),
 * no acknowledged grant is lost, nobody else gets its lock and the new primary's tokens are above
 * every acknowledged one; no grant is acknowledged when fewer replicas than {@code waitReplicas}
 * can acknowledge it. Nothing is asserted about how many grants are lost where loss is allowed,
 * nor about timings.
 *
 * <p>The holders and the second client use the backend through the SPI, as the core does
 * (including {@code abandon()} after a failed try), so that the hundreds of leases left behind
 * on dead primaries do not each log a failed release. Seed and rounds:
 * {@code -Ddlock.redis.failover.seed=N}, {@code -Ddlock.redis.failover.rounds=N}.
 */
class RedisFailoverTest {

    private static final long SEED = Long.getLong("dlock.redis.failover.seed", 20_240_611L);
    private static final int ROUNDS = Integer.getInteger("dlock.redis.failover.rounds", 20);

    /**
     * Also bounds WAIT: a grant that too few replicas acknowledge fails after about this long (the
     * backend leaves 200 ms of it for the reply). Short, to keep rounds with a stalled link quick;
     * a WAIT that succeeds takes well under a millisecond here.
     */
    private static final Duration OP_TIMEOUT = Duration.ofMillis(750);
    /** Much longer than a round, so that every holder's lease is still valid when the second client tries. */
    private static final Duration LEASE = Duration.ofSeconds(20);
    /**
     * How long replicas may take to catch up, notice a dead link and so on. A full sync of this
     * tiny data set takes about 100 ms here; the bound is generous for a loaded 2-core machine and
     * is never a measured figure.
     */
    private static final Duration SLOW_BOUND = Duration.ofSeconds(20);
    /** Bounds a grant, including a failing WAIT: the operation timeout plus generous slack. */
    private static final long GRANT_BOUND_MILLIS = OP_TIMEOUT.toMillis() + 10_000;
    private static final int CRASH_STREAM_CAP = 200;
    private static final String PREFIX = "dlock:";
    private static final int REPLICAS = 2;
    private static final Pattern OFFSET = Pattern.compile("slave_repl_offset:(\\d+)");

    enum Scenario {
        CRASH(0), PARTITION(2), STALE_PROMOTED(1);

        /** How many replicas' links are stalled during the window. */
        final int stalledLinks;

        Scenario(int stalledLinks) {
            this.stalledLinks = stalledLinks;
        }
    }

    /** Per mode (waitReplicas, lock-delay), per scenario: what the rounds measured. */
    private static final Map<String, Map<Scenario, Tally>> RESULTS = new ConcurrentSkipListMap<>();

    private ExecutorService pool;
    private Topology topology;

    @BeforeEach
    void setUp() {
        pool = Executors.newFixedThreadPool(4, r -> {
            Thread t = new Thread(r, "failover-test-holder");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        pool.shutdownNow();
        if (!pool.awaitTermination(10, TimeUnit.SECONDS)) {
            System.out.println("RedisFailoverTest: holder threads still running after 10 s");
        }
        if (topology != null) {
            topology.close();
        }
    }

    @Test
    void withoutWaitAFailoverCanLoseAcknowledgedGrantsButTheLockDelayHoldsTheSecondClientOff() throws Exception {
        experiment(0, true);
    }

    @Test
    void withoutWaitOrLockDelayAFailoverLetsASecondHolderIn() throws Exception {
        experiment(0, false);
    }

    @Test
    void withWaitForOneReplicaAcknowledgedGrantsSurvivePromotingTheReplicaFurthestAhead() throws Exception {
        experiment(1, true);
    }

    @Test
    void withWaitForEveryReplicaAcknowledgedGrantsSurviveWhicheverReplicaIsPromoted() throws Exception {
        experiment(REPLICAS, true);
    }

    @AfterAll
    static void printSummary() {
        if (RESULTS.isEmpty()) {
            return;
        }
        StringBuilder out = new StringBuilder("\nRedisFailoverTest summary, seed " + SEED + ", " + ROUNDS
                + " rounds per mode\n");
        RESULTS.forEach((mode, tallies) -> out.append(table(mode, tallies)));
        System.out.println(out);
    }

    /** Runs every round for one mode, prints the table, then asserts what must hold. */
    private void experiment(int waitReplicas, boolean lockDelay) throws Exception {
        long started = System.nanoTime();
        List<Scenario> schedule = schedule();
        // the same seed for every mode: the same scenarios and parameters, round by round
        Random random = new Random(SEED);
        String mode = mode(waitReplicas, lockDelay);
        System.out.println("RedisFailoverTest " + mode + ": seed " + SEED + ", " + ROUNDS
                + " rounds, scenarios " + schedule);
        topology = new Topology();
        Map<Scenario, Tally> tallies = new EnumMap<>(Scenario.class);
        for (Scenario s : Scenario.values()) {
            tallies.put(s, new Tally());
        }
        Ledger ledger = new Ledger();
        List<String> problems = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            Scenario scenario = schedule.get(round);
            Params params = new Params(1 + random.nextInt(2), 1 + random.nextInt(3), 2 + random.nextInt(9));
            round(waitReplicas, lockDelay, round, scenario, params, ledger, tallies.get(scenario), problems);
        }
        RESULTS.put(mode, tallies);
        System.out.println(table(mode, tallies) + "(" + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)
                + " ms, not asserted)");
        assertTrue(problems.isEmpty(), mode + ", seed " + SEED + ": "
                + problems.size() + " violation(s) of what must hold:\n" + String.join("\n", problems));
        // the acquire script raises the counter to the server's TIME before every grant, and every
        // server here shares one clock: token order survives every failover, whatever was lost
        Tally total = new Tally();
        tallies.values().forEach(total::add);
        assertTrue(total.reissued == 0 && total.notIncreasing == 0, mode + ": "
                + total.reissued + " tokens reissued and " + total.notIncreasing + " not increasing after failovers");
    }

    private static String mode(int waitReplicas, boolean lockDelay) {
        return "waitReplicas=" + waitReplicas + (lockDelay ? "" : ", lockDelay=0");
    }

    /** Balanced and shuffled with the seed: each scenario about a third of the rounds. */
    private static List<Scenario> schedule() {
        List<Scenario> s = new ArrayList<>();
        for (int i = 0; i < ROUNDS; i++) {
            s.add(Scenario.values()[i % Scenario.values().length]);
        }
        Collections.shuffle(s, new Random(SEED));
        return s;
    }

    /** A round's seeded parameters: synced grants, window grants, when the crash lands. */
    private record Params(int synced, int window, int crashDelayMillis) { }

    private void round(int waitReplicas, boolean lockDelay, int round, Scenario scenario, Params params, Ledger ledger,
                       Tally tally, List<String> problems) throws Exception {
        String where = "[" + mode(waitReplicas, lockDelay) + " round " + round + " " + scenario + "]";
        String tag = "w" + waitReplicas + (lockDelay ? "" : "-nd") + "-r" + round + "-";
        List<String> params0 = new ArrayList<>();
        if (waitReplicas > 0) {
            params0.add("waitReplicas=" + waitReplicas);
        }
        if (!lockDelay) {
            params0.add("lockDelay=0");
        }
        String query = params0.isEmpty() ? "" : "?" + String.join("&", params0);
        tally.rounds++;

        // 1. grants that both replicas acknowledge before anything goes wrong
        List<Try> synced = new ArrayList<>();
        List<Try> window;
        LockBackend<Void> holder = TestSupport.openBackend(topology.primary.uri() + query, OP_TIMEOUT);
        try {
            for (int i = 0; i < params.synced(); i++) {
                synced.add(tryAcquire(holder, tag + "synced-" + i));
            }
            topology.awaitInSync();

            // 2. the window, and the primary dies
            switch (scenario) {
                case CRASH -> window = crashWhileGranting(holder, tag, params.crashDelayMillis());
                case PARTITION -> {
                    topology.links[0].freeze();
                    topology.links[1].freeze();
                    window = grantConcurrently(holder, tag, params.window());
                    topology.primary.kill();
                }
                case STALE_PROMOTED -> {
                    topology.links[1].freeze();
                    window = grantConcurrently(holder, tag, params.window());
                    topology.primary.kill();
                }
                default -> throw new IllegalStateException(scenario.toString());
            }
        } finally {
            holder.close();
        }
        // what the links still hold is lost with the primary's host
        topology.cutLinks();

        // 3. the failover: promote a replica
        long[] offsets = topology.awaitLinksDownAndReadOffsets();
        int promote = scenario == Scenario.STALE_PROMOTED ? 1 : offsets[1] > offsets[0] ? 1 : 0;
        boolean furthestAhead = offsets[promote] >= offsets[1 - promote];
        if (!furthestAhead) {
            tally.promotedBehind++;
        }
        RedisServer promoted = topology.replicas[promote];
        Map<String, String> known = new HashMap<>();
        long counter;
        try (Jedis j = TestSupport.jedis(promoted)) {
            j.replicaofNoOne();
            for (Try t : concat(synced, window)) {
                known.put(t.name(), j.get(PREFIX + "lock:" + t.name()));
            }
            String fence = j.get(PREFIX + "fence");
            counter = fence == null ? -1 : Long.parseLong(fence);
        }

        // 4. account for the holder's grants
        long maxSynced = 0;
        for (Try t : synced) {
            countFailure(t, tally);
            if (t.granted()) {
                tally.syncedAcked++;
                maxSynced = Math.max(maxSynced, t.token());
                if (!t.value().equals(known.get(t.name()))) {
                    tally.lostSynced++;
                    problems.add(where + " the synced grant " + t + " is missing on the promoted replica (it has "
                            + known.get(t.name()) + ")");
                }
                ledger.record(t.token(), t.owner(), tally);
            }
        }
        long maxAcked = maxSynced;
        int windowAcked = 0;
        int lostWindow = 0;
        List<Try> windowByToken = new ArrayList<>(window);
        windowByToken.sort(Comparator.comparingLong(Try::token)); // concurrent grants: in the server's order
        for (Try t : windowByToken) {
            tally.windowTried++;
            countFailure(t, tally);
            if (t.granted()) {
                tally.windowAcked++;
                windowAcked++;
                maxAcked = Math.max(maxAcked, t.token());
                if (!t.value().equals(known.get(t.name()))) {
                    lostWindow++;
                }
                ledger.record(t.token(), t.owner(), tally);
            }
        }
        tally.lostWindow += lostWindow;
        boolean counterBehind = counter < maxAcked;
        if (counterBehind) {
            tally.counterBehindRounds++;
        }
        // WAIT n answered: n replicas applied the grant, so the one furthest ahead has it, and with
        // n = every replica, whichever is promoted has it
        boolean mustKeepAll = waitReplicas >= REPLICAS || waitReplicas >= 1 && furthestAhead;
        if (mustKeepAll && lostWindow > 0) {
            problems.add(where + " " + lostWindow + " grant(s) acknowledged with WAIT are missing on the promoted replica"
                    + " (offsets " + offsets[0] + "/" + offsets[1] + ")");
        }
        if (mustKeepAll && counterBehind) {
            problems.add(where + " the promoted replica's counter " + counter + " is below the acknowledged token "
                    + maxAcked);
        }
        if (waitReplicas > REPLICAS - scenario.stalledLinks && windowAcked > 0) {
            problems.add(where + " " + windowAcked + " grant(s) were acknowledged although only "
                    + (REPLICAS - scenario.stalledLinks) + " replica(s) could acknowledge them");
        }

        // 5. the new topology, and a second client on the new primary
        topology.rotate(promote);
        Map<String, Try> held = new HashMap<>();
        for (Try t : concat(synced, window)) {
            held.put(t.name(), t);
        }
        List<Try> second = new ArrayList<>();
        int secondHolders = 0;
        int heldOff = 0;
        LockBackend<Void> other = TestSupport.openBackend(topology.primary.uri() + query, OP_TIMEOUT);
        try {
            for (Try t : concat(synced, window)) {
                Try s = tryAcquire(other, t.name());
                long now = System.nanoTime();
                second.add(s);
                countFailure(s, tally);
                Try first = held.get(s.name());
                if (s.busy() && first.granted() && !first.value().equals(known.get(s.name()))) {
                    heldOff++; // the promoted replica lost the holder's grant, and still refused the lock
                }
                if (!s.granted()) {
                    continue;
                }
                ledger.record(s.token(), s.owner(), tally);
                if (s.token() <= maxSynced) {
                    problems.add(where + " the new primary issued token " + s.token() + " for '" + s.name()
                            + "', not above the synced token " + maxSynced);
                }
                if (mustKeepAll && s.token() <= maxAcked) {
                    problems.add(where + " the new primary issued token " + s.token() + " for '" + s.name()
                            + "', not above the acknowledged token " + maxAcked);
                }
                if (first.granted() && first.validAt(now)) {
                    secondHolders++;
                    if (synced.contains(first) || mustKeepAll || lockDelay) {
                        problems.add(where + " the second client got '" + s.name() + "' (token " + s.token()
                                + ") while the holder's grant " + first + " was valid");
                    }
                }
            }
            for (Try s : second) {
                if (s.granted()) {
                    released(other.release(new Grant<Void>(s.name(), s.owner(), s.token(), LEASE, null)));
                }
            }
        } finally {
            other.close();
        }
        tally.secondHolder += secondHolders;
        tally.heldOff += heldOff;
        if (lockDelay) {
            // the next round starts on a primary long past its failover, not in its lock-delay
            topology.primary.markLockDelayPassed(0, PREFIX);
        }

        long secondGranted = second.stream().filter(Try::granted).count();
        System.out.println(where + " synced " + countGranted(synced) + "/" + synced.size() + ", window acked "
                + windowAcked + "/" + window.size() + ", promoted replica " + promote + " (offsets " + offsets[0] + "/"
                + offsets[1] + (furthestAhead ? "" : ", behind") + "), lost " + lostWindow + ", counter " + counter
                + (counterBehind ? " < acknowledged " + maxAcked : " >= acknowledged " + maxAcked) + "; second client got "
                + secondGranted + " of " + second.size() + ", " + secondHolders + " while the holder's lease was valid, "
                + heldOff + " lost grant(s) held off"
                + (secondGranted == 0 ? "" : ", tokens " + second.stream().filter(Try::granted).map(Try::token).toList())
                + synced.stream().filter(Try::failed).map(t -> "; synced grant " + t).collect(Collectors.joining()));
    }

    /**
     * The holder acquires fresh names back to back; a few ms into the stream (seeded) the primary
     * is killed. Replication links are left alone: only the natural lag can lose a grant.
     */
    private List<Try> crashWhileGranting(LockBackend<Void> holder, String tag, int delayMillis) throws Exception {
        List<Try> tries = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch started = new CountDownLatch(1);
        Future<?> stream = pool.submit(() -> {
            for (int i = 0; i < CRASH_STREAM_CAP && !Thread.currentThread().isInterrupted(); i++) {
                Try t = tryAcquire(holder, tag + "window-" + i);
                tries.add(t);
                started.countDown();
                if (t.failed()) {
                    return; // the primary is gone
                }
            }
        });
        if (!started.await(SLOW_BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
            fail("the holder's first grant did not come within " + SLOW_BOUND);
        }
        Thread.sleep(delayMillis);
        topology.primary.kill();
        stream.get(GRANT_BOUND_MILLIS, TimeUnit.MILLISECONDS);
        synchronized (tries) {
            return new ArrayList<>(tries);
        }
    }

    /** Several holders' grants at once, so that failing WAITs cost one operation timeout, not several. */
    private List<Try> grantConcurrently(LockBackend<Void> holder, String tag, int n) throws Exception {
        List<Future<Try>> futures = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String name = tag + "window-" + i;
            futures.add(pool.submit(() -> tryAcquire(holder, name)));
        }
        List<Try> out = new ArrayList<>();
        for (Future<Try> f : futures) {
            out.add(f.get(GRANT_BOUND_MILLIS, TimeUnit.MILLISECONDS));
        }
        return out;
    }

    /** One try, as the core makes it: abandon after a failure, so that an unknown outcome is undone. */
    private static Try tryAcquire(LockBackend<Void> backend, String name) {
        AcquireRequest request = TestSupport.request(name, LEASE);
        AcquireAttempt<Void> attempt = backend.newAttempt(request);
        long sent = System.nanoTime();
        try {
            AttemptResult<Void> r = attempt.tryOnce();
            if (isGranted(r)) {
                return new Try(name, request.ownerId(), sent, token(r), false, null);
            }
            attempt.abandon();
            return new Try(name, request.ownerId(), sent, 0, true, null);
        } catch (LockBackendException e) {
            attempt.abandon();
            return new Try(name, request.ownerId(), sent, 0, false, e);
        }
    }

    /** Counts a failed try: WAIT not satisfied (the backend's message names waitReplicas), or another failure. */
    private static void countFailure(Try t, Tally tally) {
        if (!t.failed()) {
            return;
        }
        if (t.error().getMessage() != null && t.error().getMessage().contains("waitReplicas")) {
            tally.waitFailures++;
        } else {
            tally.otherFailures++;
        }
    }

    private static long countGranted(List<Try> tries) {
        return tries.stream().filter(Try::granted).count();
    }

    private static List<Try> concat(List<Try> a, List<Try> b) {
        List<Try> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    /** One acquire try and its answer: a grant (token), busy, or a backend failure. */
    private record Try(String name, String owner, long sentNanos, long token, boolean busy,
                       LockBackendException error) {

        boolean granted() {
            return error == null && !busy;
        }

        boolean failed() {
            return error != null;
        }

        /** The core's validity rule: sent + lease - (1% of the lease + min(20 ms, lease / 10)). */
        boolean validAt(long nanos) {
            long lease = LEASE.toNanos();
            long margin = lease / 100 + Math.min(20_000_000L, lease / 10);
            return granted() && nanos - (sentNanos + lease - margin) < 0;
        }

        /** What the grant stored in the lock's key. */
        String value() {
            return owner + ":" + token;
        }

        @Override
        public String toString() {
            return "'" + name + "' " + (granted() ? "token " + token : busy ? "busy" : "failed: " + error.getMessage());
        }
    }

    /** Every token acknowledged so far in one mode, to tell reissued and non-increasing tokens. */
    private static final class Ledger {
        private final Map<Long, String> owners = new HashMap<>();
        private long max;

        void record(long token, String owner, Tally tally) {
            String before = owners.putIfAbsent(token, owner);
            if (before != null && !before.equals(owner)) {
                tally.reissued++;
            }
            if (token <= max) {
                tally.notIncreasing++;
            }
            max = Math.max(max, token);
        }
    }

    /** What one scenario's rounds measured in one mode. */
    private static final class Tally {
        int rounds;
        int syncedAcked;
        int windowTried;
        int windowAcked;
        int waitFailures;
        int otherFailures;
        int lostSynced;
        int lostWindow;
        int secondHolder;
        int heldOff;
        int counterBehindRounds;
        int reissued;
        int notIncreasing;
        int promotedBehind;

        void add(Tally o) {
            rounds += o.rounds;
            syncedAcked += o.syncedAcked;
            windowTried += o.windowTried;
            windowAcked += o.windowAcked;
            waitFailures += o.waitFailures;
            otherFailures += o.otherFailures;
            lostSynced += o.lostSynced;
            lostWindow += o.lostWindow;
            secondHolder += o.secondHolder;
            heldOff += o.heldOff;
            counterBehindRounds += o.counterBehindRounds;
            reissued += o.reissued;
            notIncreasing += o.notIncreasing;
            promotedBehind += o.promotedBehind;
        }
    }

    private static String table(String mode, Map<Scenario, Tally> tallies) {
        String format = "| %-14s | %6s | %6s | %13s | %9s | %6s | %6s | %11s | %8s | %14s | %8s | %14s | %15s |%n";
        StringBuilder b = new StringBuilder("\n" + mode + " (seed " + SEED + ")\n");
        b.append(String.format(format, "scenario", "rounds", "synced", "window acked", "WAIT fail", "other",
                "lost", "2nd holder", "held off", "counter behind", "reissued", "not increasing", "promoted behind"));
        Tally total = new Tally();
        Map<String, Tally> rows = new LinkedHashMap<>();
        tallies.forEach((s, t) -> rows.put(s.name(), t));
        tallies.values().forEach(total::add);
        rows.put("total", total);
        rows.forEach((name, t) -> b.append(String.format(format, name, t.rounds, t.syncedAcked,
                t.windowAcked + "/" + t.windowTried, t.waitFailures, t.otherFailures, t.lostWindow + t.lostSynced,
                t.secondHolder, t.heldOff, t.counterBehindRounds, t.reissued, t.notIncreasing, t.promotedBehind)));
        return b.toString();
    }

    /**
     * Three servers: a primary and two replicas, each replicating through its own proxy. After a
     * failover the promoted replica is the primary, the other replica and the restarted old
     * primary its replicas.
     */
    private static final class Topology implements AutoCloseable {
        private final List<RedisServer> servers = new ArrayList<>();
        private final RedisServer[] replicas = new RedisServer[2];
        private final TcpProxy[] links = new TcpProxy[2];
        private RedisServer primary;
        private long marks;

        Topology() {
            try {
                for (int i = 0; i < 3; i++) {
                    // every server may become the primary: no 5 s wait before a full sync
                    servers.add(RedisServer.start(List.of("--repl-diskless-sync-delay", "0")));
                }
                primary = servers.get(0);
                replicas[0] = servers.get(1);
                replicas[1] = servers.get(2);
                attach(0);
                attach(1);
                awaitInSync();
            } catch (RuntimeException | Error e) {
                close();
                throw e;
            }
        }

        /** Points replica i at the primary through a new proxy. */
        private void attach(int i) {
            links[i] = TcpProxy.start(primary.address());
            try (Jedis j = TestSupport.jedis(replicas[i])) {
                j.replicaof(links[i].address().getAddress().getHostAddress(), links[i].address().getPort());
            }
        }

        /**
         * Waits until both replicas acknowledged every write made so far and take new writes as
         * they come: a marker, WAIT on its connection, then a second marker and WAIT. The second is
         * needed after a full sync: a replica may acknowledge the synced data before the primary
         * starts streaming new writes to it (Redis 7.0, diskless sync: the stream can start only at
         * the replica's next periodic ACK, up to a second later), and a grant's WAIT in between
         * would fail for reasons that have nothing to do with this experiment.
         */
        void awaitInSync() {
            try (Jedis j = TestSupport.jedis(primary)) {
                for (int pass = 0; pass < 2; pass++) {
                    j.set("dlock-test:sync-mark", Long.toString(++marks));
                    long deadline = System.nanoTime() + SLOW_BOUND.toNanos();
                    while (j.waitReplicas(2, 200) < 2) {
                        if (System.nanoTime() - deadline > 0) {
                            fail("the replicas did not catch up with the primary within " + SLOW_BOUND + ":\n"
                                    + j.info("replication"));
                        }
                    }
                }
            }
        }

        /** Cuts both replication links, dropping whatever a stalled link still held, and closes the proxies. */
        void cutLinks() {
            for (int i = 0; i < 2; i++) {
                if (links[i] != null) {
                    links[i].cutConnections();
                    links[i].close();
                    links[i] = null;
                }
            }
        }

        /** @return each replica's applied replication offset, once both noticed that their link is down */
        long[] awaitLinksDownAndReadOffsets() {
            long[] offsets = new long[2];
            for (int i = 0; i < 2; i++) {
                try (Jedis j = TestSupport.jedis(replicas[i])) {
                    TestTiming.await("replica " + i + " notices that its primary is gone", SLOW_BOUND,
                            () -> j.info("replication").contains("master_link_status:down"));
                    Matcher m = OFFSET.matcher(j.info("replication"));
                    if (!m.find()) {
                        fail("no slave_repl_offset in INFO replication of replica " + i);
                    }
                    offsets[i] = Long.parseLong(m.group(1));
                }
            }
            return offsets;
        }

        /** After replica {@code promoted} became the primary: the other replica and the restarted old primary follow it. */
        void rotate(int promoted) {
            RedisServer old = primary;
            RedisServer other = replicas[1 - promoted];
            primary = replicas[promoted];
            replicas[0] = other;
            replicas[1] = old;
            old.restart(); // empty, as a crashed server without persistence comes back
            attach(0);
            attach(1);
            awaitInSync();
        }

        @Override
        public void close() {
            cutLinks();
            for (RedisServer s : servers) {
                s.close();
            }
        }
    }
}
