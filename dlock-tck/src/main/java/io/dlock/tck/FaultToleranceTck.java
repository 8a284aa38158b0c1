package io.dlock.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.Capability;
import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The TCK's fault tier: rules that pause, kill and restart the backend's servers, kill a cluster's
 * leader, and a randomized fault run. Destructive, so it is a suite of its own: a provider author
 * subclasses it with a fixture that offers {@link TckFixture#server()} and, for S9,
 * {@link TckFixture#cluster()}; rules whose hook is missing are skipped. Never run it against a
 * deployment you care about.
 *
 * <p>The randomized run lasts {@code dlock.tck.nemesis.duration} (an ISO-8601 duration, default
 * {@code PT30S}) and draws every choice from the TCK seed, printed at the start.
 */
public abstract class FaultToleranceTck extends TckSupport {

    /** Creates the suite; subclasses supply the fixture in {@link #createFixture()}. */
    protected FaultToleranceTck() { }

    private ServerControl server(String rule) {
        Optional<ServerControl> s = fixture().server();
        assumeTrue(s.isPresent(), rule + " needs TckFixture.server() (pause, kill and restart the server); the fixture offers none");
        return s.get();
    }

    private Duration patience() {
        // generous: after a fault, clients reconnect, sessions and leases run out, servers elect
        return lease().multipliedBy(6).plus(opTimeout().multipliedBy(6)).plus(Duration.ofSeconds(10));
    }

    /** Retries an acquire through backend failures until it succeeds or the patience runs out. */
    private Optional<Lease> acquireThroughFaults(LockClient client, String name, Duration patience) throws InterruptedException {
        long deadline = System.nanoTime() + patience.toNanos();
        LockBackendException last = null;
        while (System.nanoTime() - deadline < 0) {
            try {
                Optional<Lease> l = client.lock(name).tryAcquire(lease());
                if (l.isPresent()) {
                    return l;
                }
            } catch (LockBackendException e) {
                last = e;
                Thread.sleep(100);
            }
        }
        if (last != null) {
            System.out.println("[dlock-tck] last backend failure while waiting: " + last.getMessage());
        }
        return Optional.empty();
    }

    /**
     * S7, server side: a holder whose server stops answering is told it lost the lock before anyone gets it.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void S7_lostLeaseReportedWhenTheServerPauses() throws Exception {
        ServerControl server = server("S7 (server pause)");
        String name = name(Rule.S7);
        LockClient holder = client();
        LockClient other = client();
        Lease lease = holder.lock(name).tryAcquire(lease()).orElseThrow();
        AtomicLong lostAt = new AtomicLong();
        lease.onLost(e -> lostAt.compareAndSet(0, System.nanoTime()));
        long pausedAt = System.nanoTime();
        server.pause();
        long resumedAt;
        try {
            // paused long enough for the lease to run out on the server's clock too
            sleep(lease().multipliedBy(2).plus(opTimeout()));
            assertTrue(lostAt.get() != 0, Rule.S7.failure("the holder was not told it lost the lock while the server was "
                    + "paused for " + millis(System.nanoTime() - pausedAt) + " ms with a lease of " + lease().toMillis() + " ms"));
            assertFalse(lease.isValid(), Rule.S7.failure("the lease stayed valid while the server was paused"));
        } finally {
            resumedAt = System.nanoTime();
            server.resume();
        }
        Optional<Lease> next = acquireThroughFaults(other, name, patience());
        long takenAt = System.nanoTime();
        assertTrue(next.isPresent(), Rule.S7.failure("after the server resumed, the lock never became free"));
        assertTrue(lostAt.get() - takenAt < 0, Rule.S7.failure("the holder was told only after another client got the lock"));
        System.out.println("[dlock-tck] S7 (server pause): lost reported " + millis(lostAt.get() - pausedAt)
                + " ms after the pause; lock taken again " + millis(takenAt - resumedAt) + " ms after the resume");
        next.get().release();
    }

    /**
     * L6: after a server restart, old leases are reported lost, clients recover, and tokens keep increasing.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void L6_clientsRecoverAfterAServerRestart() throws Exception {
        ServerControl server = server("L6");
        String name = name(Rule.L6);
        LockClient a = client();
        LockClient b = client();
        Lease before = a.lock(name).tryAcquire(lease()).orElseThrow();
        AtomicLong lostAt = new AtomicLong();
        before.onLost(e -> lostAt.compareAndSet(0, System.nanoTime()));
        long killedAt = System.nanoTime();
        server.kill();
        try {
            // generous: renewals fail one by one until validity runs out
            assertTrue(await(() -> lostAt.get() != 0, lease().multipliedBy(2).plus(opTimeout().multipliedBy(2))),
                    Rule.L6.failure("the holder was not told it lost the lock after its server was killed"));
        } finally {
            server.restart();
        }
        long restartedAt = System.nanoTime();
        Optional<Lease> again = acquireThroughFaults(b, name, patience());
        assertTrue(again.isPresent(), Rule.L6.failure("no client could take the lock within " + patience()
                + " of the server's restart"));
        long recovered = System.nanoTime() - restartedAt;
        if (a.capabilities().contains(Capability.FENCING)) {
            assertTrue(again.get().fencingToken() > before.fencingToken(), Rule.L6.failure("the token went from "
                    + before.fencingToken() + " before the restart to " + again.get().fencingToken() + " after it"));
        }
        again.get().release();
        Optional<Lease> sameClient = acquireThroughFaults(a, name(Rule.L6), patience());
        assertTrue(sameClient.isPresent(), Rule.L6.failure("the client that held a lock before the restart never recovered"));
        sameClient.get().release();
        System.out.println("[dlock-tck] L6: lost reported " + millis(lostAt.get() - killedAt) + " ms after the kill; lock "
                + "taken again " + millis(recovered) + " ms after the restart; token " + before.fencingToken() + " -> "
                + again.get().fencingToken());
    }

    /**
     * S11: a server that restarts without its locks lets nobody in while a lease granted before the
     * restart can still be valid on its holder's clock, and tokens keep increasing across it.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void S11_emptyRestartLetsNobodyInWhileOldLeasesLive() throws Exception {
        ServerControl server = server("S11");
        assumeTrue(server.restartLosesLocks(), "S11 needs a server that restarts without its locks "
                + "(ServerControl.restartLosesLocks()); this fixture's server keeps them across a restart");
        LockClient holder = client();
        assumeTrue(holder.capabilities().contains(Capability.SURVIVES_EMPTY_RESTART), "S11 needs "
                + "Capability.SURVIVES_EMPTY_RESTART, which " + fixture().name() + " does not declare: after a restart "
                + "that loses its locks it may grant a lock whose old holder still believes it holds it");
        String name = name(Rule.S11);
        LockClient waiterClient = client();
        Lease old = holder.lock(name).tryAcquire(lease()).orElseThrow();
        AtomicLong lostAt = new AtomicLong();
        old.onLost(e -> lostAt.compareAndSet(0, System.nanoTime()));
        // a waiter queued before the restart takes the lock the moment the server lets it
        AtomicLong grantedAt = new AtomicLong();
        AtomicBoolean oldValidAtGrant = new AtomicBoolean();
        AtomicReference<Lease> next = new AtomicReference<>();
        Worker waiter = new Worker("S11-waiter", () -> {
            Optional<Lease> l = acquireThroughFaults(waiterClient, name, patience());
            oldValidAtGrant.set(old.isValid());
            grantedAt.set(System.nanoTime());
            l.ifPresent(next::set);
        });
        waiter.start();
        sleep(lease().dividedBy(2));
        long killedAt = System.nanoTime();
        server.kill();
        server.restart();
        long upAt = System.nanoTime();
        waiter.finish(patience().plus(Duration.ofSeconds(10)));
        assertTrue(next.get() != null, Rule.S11.failure("no client got the lock within " + patience()
                + " of a restart that lost it"));
        assertFalse(oldValidAtGrant.get(), Rule.S11.failure("a client got the lock " + millis(grantedAt.get() - upAt)
                + " ms after the server came back empty, while the lease granted before the restart was still valid "
                + "on its holder's clock"));
        assertTrue(lostAt.get() != 0 && lostAt.get() - grantedAt.get() <= 0, Rule.S11.failure(
                "the old holder was not told it lost the lock before another client got it"));
        if (holder.capabilities().contains(Capability.FENCING)) {
            assertTrue(next.get().fencingToken() > old.fencingToken(), Rule.S11.failure("the token went from "
                    + old.fencingToken() + " before the restart to " + next.get().fencingToken() + " after it"));
        }
        System.out.println("[dlock-tck] S11: restart took " + millis(upAt - killedAt) + " ms; old holder told "
                + millis(lostAt.get() - upAt) + " ms after it, next grant " + millis(grantedAt.get() - upAt) + " ms after it");
        next.get().release();
    }

    /**
     * N2: after faults stop, the lock is granted again within two lease times plus the operation
     * timeout: no stranded key, queue entry, late-applied create or session keeps it. Two clients
     * contend with short waits (so they time out and abandon) while each fault kind the fixture
     * offers is injected into one of them; after the fault heals and they stop, a fresh client
     * must get the lock in time.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    public void N2_grantsResumeAfterFaults() throws Exception {
        List<String> faults = new ArrayList<>();
        FreezableClient probe = freezable("N2");
        for (NetworkFault f : NetworkFault.values()) {
            if (f == NetworkFault.FREEZE || probe.faults().contains(f)) {
                faults.add("network:" + f);
            }
        }
        faults.add("crash");
        if (fixture().server().isPresent()) {
            faults.add("server pause");
        }
        Optional<ClusterControl> cluster = fixture().cluster();
        if (cluster.isPresent() && cluster.get().canIsolateMembers()) {
            faults.add("member isolation");
        }
        LockClient fresh = client();
        // generous only by the fresh client's own retry cap and a round trip: two lease times plus the operation
        // timeout is what the rule promises
        Duration promise = lease().multipliedBy(2).plus(opTimeout());
        Duration bound = promise.plus(Duration.ofMillis(500));
        List<String> measured = new ArrayList<>();
        for (String fault : faults) {
            String name = name(Rule.N2);
            FreezableClient victim = freezable("N2");
            FreezableClient bystander = freezable("N2");
            AtomicBoolean stop = new AtomicBoolean();
            List<Worker> contenders = new ArrayList<>();
            for (FreezableClient c : List.of(victim, bystander)) {
                Worker w = new Worker("N2-" + contenders.size(), () -> {
                    while (!stop.get()) {
                        try {
                            c.client().lock(name).tryAcquire(lease().dividedBy(3)).ifPresent(l -> {
                                sleep(Duration.ofMillis(20));
                                l.release();
                            });
                        } catch (LockBackendException e) {
                            Thread.sleep(20); // expected while the fault lasts
                        }
                    }
                });
                contenders.add(w);
                w.start();
            }
            sleep(lease().dividedBy(2));
            Duration faultFor = lease().multipliedBy(2);
            switch (fault) {
                case "crash" -> victim.crash();
                case "server pause" -> fixture().server().orElseThrow().pause();
                case "member isolation" -> cluster.orElseThrow().isolateMember();
                default -> victim.inject(NetworkFault.valueOf(fault.substring("network:".length())));
            }
            try {
                sleep(faultFor);
            } finally {
                switch (fault) {
                    case "server pause" -> fixture().server().orElseThrow().resume();
                    case "member isolation" -> cluster.orElseThrow().healIsolation();
                    default -> victim.heal();
                }
            }
            stop.set(true);
            for (Worker w : contenders) {
                w.finish(patience());
            }
            long healedAt = System.nanoTime();
            Optional<Lease> got = acquireThroughFaults(fresh, name, bound);
            long after = System.nanoTime() - healedAt;
            assertTrue(got.isPresent(), Rule.N2.failure("after " + fault + " was healed and its contenders stopped, no "
                    + "client got the lock within " + bound.toMillis() + " ms (two lease times plus the operation timeout, "
                    + "plus 500 ms): something stranded keeps it"));
            got.get().release();
            measured.add(fault + " " + millis(after) + " ms");
            victim.close();
            bystander.close();
        }
        System.out.println("[dlock-tck] N2: lock granted again after " + String.join(", ", measured));
    }

    /**
     * S9: exclusion and token order hold while the cluster's leader is killed, and waiters finish.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    public void S9_exclusionAndTokenOrderSurviveFailover() throws Exception {
        fixture().notApplicable(Rule.S9).ifPresent(reason -> assumeTrue(false, "not applicable: " + reason));
        LockClient probe = client();
        assumeTrue(probe.capabilities().contains(Capability.SURVIVES_SERVER_FAILOVER),
                "S9 needs Capability.SURVIVES_SERVER_FAILOVER, which " + fixture().name() + " does not declare");
        Optional<ClusterControl> cluster = fixture().cluster();
        assumeTrue(cluster.isPresent(), "S9 needs TckFixture.cluster(); the fixture runs no cluster");
        String name = name(Rule.S9);
        List<LockClient> clients = List.of(client(), client(), client());
        HoldLog log = new HoldLog();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong failoverAt = new AtomicLong(Long.MAX_VALUE);
        AtomicInteger failures = new AtomicInteger();
        AtomicInteger grantsAfter = new AtomicInteger();
        List<Worker> workers = new ArrayList<>();
        for (int i = 0; i < clients.size() * 2; i++) {
            LockClient c = clients.get(i % clients.size());
            String who = "client " + i % clients.size() + " thread " + i;
            Worker w = new Worker("S9-" + i, () -> {
                while (!stop.get()) {
                    Optional<Lease> l;
                    try {
                        l = c.lock(name).tryAcquire(lease());
                    } catch (LockBackendException e) {
                        failures.incrementAndGet(); // allowed during a failover: a failure, never a false grant
                        Thread.sleep(50);
                        continue;
                    }
                    if (l.isEmpty()) {
                        continue;
                    }
                    try (Lease lease = l.get()) {
                        long start = log.enter(lease);
                        if (start > failoverAt.get()) {
                            grantsAfter.incrementAndGet();
                        }
                        Thread.sleep(5);
                        log.exit(who, lease, start);
                    }
                }
            });
            workers.add(w);
            w.start();
        }
        sleep(lease().multipliedBy(2));
        String killed;
        try {
            failoverAt.set(System.nanoTime());
            killed = cluster.get().killLeader();
            sleep(lease().multipliedBy(4).plus(opTimeout().multipliedBy(2)));
            // liveness under the new leader: grants after the failover, within generous patience
            assertTrue(await(() -> grantsAfter.get() >= workers.size(), patience()),
                    Rule.S9.failure("only " + grantsAfter.get() + " grants after the leader was killed"));
        } finally {
            stop.set(true);
            for (Worker w : workers) {
                w.finish(patience());
            }
            cluster.get().restartKilled();
        }
        log.overlap().ifPresent(o -> fail(Rule.S9.failure(o)));
        if (probe.capabilities().contains(Capability.FENCING)) {
            log.tokenRegression().ifPresent(r -> fail(Rule.S9.failure(r)));
        }
        System.out.println("[dlock-tck] S9: killed " + killed + "; " + log.holds().size() + " proven holds, "
                + grantsAfter.get() + " after the failover, " + failures.get() + " backend failures, no overlap, tokens in order");
    }

    /**
     * N1: a randomized fault run. Clients increment a fenced register under the lock while a
     * nemesis stalls their networks, pauses the server and kills and restarts it (or the cluster's
     * leader). Every operation goes into a {@link History}; the checker then requires zero stale
     * writes accepted and zero lost updates, and zero overlaps of proven holds where no data-losing
     * restart was injected or the backend claims to survive failover.
     *
     * @throws Exception if the run is unsafe, the backend fails, or the test is interrupted
     */
    @Test
    @Timeout(value = 3600, unit = TimeUnit.SECONDS)
    public void N1_randomizedFaultRun() throws Exception {
        requireFencing(Rule.N1);
        Duration duration = Duration.parse(setting("dlock.tck.nemesis.duration").orElse("PT30S"));
        SplittableRandom random = new SplittableRandom(seed());
        String name = name(Rule.N1);
        Optional<ServerControl> server = fixture().server();
        Optional<ClusterControl> cluster = fixture().cluster();
        List<FreezableClient> freezables = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Optional<FreezableClient> c = fixture().openFreezable(config());
            assumeTrue(c.isPresent(), "N1 needs TckFixture.openFreezable; the fixture offers none");
            opened.add(c.get());
            freezables.add(c.get());
        }
        History history = new History();
        FencedRegister register = new FencedRegister();
        AtomicBoolean stop = new AtomicBoolean();
        List<Worker> workers = new ArrayList<>();
        for (int i = 0; i < freezables.size(); i++) {
            LockClient c = freezables.get(i).client();
            String p = "c" + i;
            SplittableRandom r = random.split();
            Worker w = new Worker("N1-" + p, () -> {
                while (!stop.get()) {
                    long op = history.invoke(p, "acquire");
                    Optional<Lease> got;
                    try {
                        got = c.lock(name).tryAcquire(lease());
                    } catch (LockBackendException e) {
                        history.complete(op, History.Outcome.FAIL, 0, 0);
                        Thread.sleep(20);
                        continue;
                    }
                    if (got.isEmpty()) {
                        history.complete(op, History.Outcome.FAIL, 0, 0);
                        continue;
                    }
                    Lease lease = got.get();
                    long token = lease.fencingToken();
                    history.complete(op, History.Outcome.OK, token, 0);
                    op = history.invoke(p, "read");
                    OptionalLong v = register.read(p, token);
                    history.complete(op, v.isPresent() ? History.Outcome.OK : History.Outcome.FAIL, token, v.orElse(0));
                    if (v.isPresent()) {
                        // usually quick work; sometimes a pause longer than the lease, like a GC pause,
                        // after which the process writes without checking its lease (the fence must catch it)
                        long work = r.nextInt(10) < 8 ? r.nextInt(10) : r.nextLong(lease().toMillis() * 3 / 2);
                        Thread.sleep(work);
                        op = history.invoke(p, "write");
                        boolean ok = register.write(p, token, v.getAsLong() + 1);
                        history.complete(op, ok ? History.Outcome.OK : History.Outcome.FAIL, token, v.getAsLong() + 1);
                    }
                    if (lease.isValid()) {
                        long held = history.invoke(p, "held");
                        history.complete(held, History.Outcome.OK, token, 0);
                    }
                    long rel = history.invoke(p, "release");
                    lease.release();
                    history.complete(rel, History.Outcome.OK, token, 0);
                }
            });
            workers.add(w);
        }
        long runStart = System.nanoTime();
        workers.forEach(Thread::start);
        int freezes = 0;
        int crashes = 0;
        int pauses = 0;
        int restarts = 0;
        int leaderKills = 0;
        int isolations = 0;
        Map<String, Integer> networkFaults = new TreeMap<>();
        List<NetworkFault> kinds = new ArrayList<>(List.of(NetworkFault.FREEZE));
        for (NetworkFault f : NetworkFault.values()) {
            if (f != NetworkFault.FREEZE && freezables.get(0).faults().contains(f)) {
                kinds.add(f);
            }
        }
        boolean isolate = cluster.isPresent() && cluster.get().canIsolateMembers();
        // a restart that loses the locks may let a second holder in, unless the backend claims it cannot: only the
        // holds that straddle such a restart are excused, never the rest of the run
        boolean excuseRestarts = server.isPresent() && server.get().restartLosesLocks()
                && !freezables.get(0).client().capabilities().contains(Capability.SURVIVES_EMPTY_RESTART);
        List<History.Window> excused = new ArrayList<>();
        List<String> stuck = new ArrayList<>();
        // grants must resume after every fault: two lease times plus the operation timeout, as N2 promises,
        // plus 500 ms for the contenders' retry cap and scheduling
        Duration resume = lease().multipliedBy(2).plus(opTimeout()).plus(Duration.ofMillis(500));
        long end = System.nanoTime() + duration.toNanos();
        long lastProgress = System.nanoTime();
        try {
            while (System.nanoTime() - end < 0) {
                sleep(Duration.ofMillis(300 + random.nextInt(1200)));
                int action = random.nextInt(12);
                Duration faultFor = Duration.ofMillis(lease().toMillis() / 2 + random.nextLong(lease().toMillis() * 2));
                String fault = null;
                if (action < 5) {
                    FreezableClient victim = freezables.get(random.nextInt(freezables.size()));
                    NetworkFault kind = action == 4 ? null : kinds.get(random.nextInt(kinds.size()));
                    if (kind == null) {
                        victim.crash();
                        fault = "client crash";
                        crashes++;
                    } else {
                        victim.inject(kind);
                        fault = "client " + kind;
                        networkFaults.merge(kind.name(), 1, Integer::sum);
                    }
                    sleep(faultFor);
                    victim.heal();
                    freezes++;
                } else if (action < 7 && server.isPresent()) {
                    server.get().pause();
                    sleep(faultFor);
                    server.get().resume();
                    pauses++;
                    fault = "server pause";
                } else if (action == 7 && cluster.isPresent()) {
                    cluster.get().killLeader();
                    sleep(faultFor);
                    cluster.get().restartKilled();
                    leaderKills++;
                    fault = "leader kill";
                } else if (action == 8 && server.isPresent() && restarts < 2) {
                    long killedAt = System.nanoTime();
                    server.get().kill();
                    sleep(faultFor);
                    server.get().restart();
                    restarts++;
                    fault = "server restart";
                    if (excuseRestarts) {
                        excused.add(new History.Window(killedAt, System.nanoTime() + lease().plus(opTimeout()).toNanos()));
                    }
                } else if (action == 9 && isolate) {
                    String member = cluster.get().isolateMember();
                    sleep(faultFor);
                    cluster.get().healIsolation();
                    isolations++;
                    fault = "isolation of " + member;
                }
                if (fault != null) {
                    long healedAt = System.nanoTime();
                    if (!await(() -> grantSince(history, healedAt), resume)) {
                        stuck.add(fault + " (healed " + millis(healedAt - runStart) + " ms into the run)");
                    }
                }
                if (System.nanoTime() - lastProgress > TimeUnit.SECONDS.toNanos(10)) {
                    lastProgress = System.nanoTime();
                    System.out.println("[dlock-tck] N1 " + fixture().name() + ": " + millis(end - System.nanoTime()) / 1000
                            + " s left, register at " + register.value());
                }
            }
        } finally {
            freezables.forEach(FreezableClient::heal);
            stop.set(true);
            for (Worker w : workers) {
                w.finish(patience().multipliedBy(2));
            }
        }
        History.Verdict verdict = History.check(history.events(), register.log(), register.value(), excused);
        System.out.println("[dlock-tck] N1 " + fixture().name() + " (seed " + seed() + ", " + duration + "): " + freezes
                + " client network faults " + networkFaults + ", " + pauses + " server pauses, " + restarts
                + " server restarts" + (excused.isEmpty() ? "" : " (holds straddling them excused)") + ", " + leaderKills
                + " leader kills, " + isolations + " member isolations; " + verdict
                + (stuck.isEmpty() ? "; grants resumed after every fault" : "; no grant in time after " + stuck));
        writeFigures(duration, cluster.isPresent(), networkFaults, crashes, pauses, restarts, leaderKills, isolations, verdict,
                stuck.size());
        assertTrue(verdict.grants() > 0, Rule.N1.failure("no grant at all in " + duration));
        assertEquals(0, verdict.staleAccepted(), Rule.N1.failure(verdict.toString()));
        assertEquals(0, verdict.lostUpdates(), Rule.N1.failure(verdict.toString()));
        assertEquals(0, verdict.overlaps(), Rule.N1.failure(verdict.toString()));
        assertTrue(stuck.isEmpty(), Rule.N1.failure("no grant within " + resume.toMillis() + " ms after " + stuck));
    }

    private static boolean grantSince(History history, long since) {
        List<History.Event> events = history.events();
        for (int i = events.size() - 1; i >= 0; i--) {
            History.Event e = events.get(i);
            if (e.at() - since < 0) {
                return false;
            }
            if (e.op().equals("acquire") && e.outcome() == History.Outcome.OK) {
                return true;
            }
        }
        return false;
    }

    /** Keeps the figures of the last randomized run next to the report, for docs/COMPATIBILITY.md. */
    private void writeFigures(Duration duration, boolean cluster, Map<String, Integer> networkFaults, int crashes, int pauses,
            int restarts, int leaderKills, int isolations, History.Verdict v, int stuck) {
        String dir = setting("dlock.tck.reportDir").orElse(null);
        if (dir == null || dir.isBlank() || !fixture().reportable()) {
            return;
        }
        StringBuilder kinds = new StringBuilder();
        networkFaults.forEach((k, n) -> kinds.append(kinds.length() == 0 ? "" : ", ").append(k).append(' ').append(n));
        String line = String.join("\t", fixture().name(), cluster ? "cluster" : "server", duration.toString(),
                Long.toString(seed()), kinds.length() == 0 ? "0" : kinds.toString(), Integer.toString(crashes),
                Integer.toString(pauses), Integer.toString(restarts), Integer.toString(leaderKills),
                Integer.toString(isolations), Integer.toString(v.grants()), Integer.toString(v.staleRejected()),
                Integer.toString(v.staleAccepted()), Integer.toString(v.lostUpdates()), Integer.toString(v.overlaps()),
                Integer.toString(stuck));
        TckReport.writeNemesisFigures(java.nio.file.Path.of(dir), fixture().name() + (cluster ? "-cluster" : ""), duration, line);
    }
}
