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
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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
        Duration duration = Duration.parse(System.getProperty("dlock.tck.nemesis.duration", "PT30S"));
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
        boolean claimsFailover = freezables.get(0).client().capabilities().contains(Capability.SURVIVES_SERVER_FAILOVER);
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
        workers.forEach(Thread::start);
        int freezes = 0;
        int pauses = 0;
        int restarts = 0;
        int leaderKills = 0;
        boolean dataLossPossible = false;
        long end = System.nanoTime() + duration.toNanos();
        long lastProgress = System.nanoTime();
        try {
            while (System.nanoTime() - end < 0) {
                sleep(Duration.ofMillis(300 + random.nextInt(1200)));
                int action = random.nextInt(10);
                Duration faultFor = Duration.ofMillis(lease().toMillis() / 2 + random.nextLong(lease().toMillis() * 2));
                if (action < 5) {
                    FreezableClient victim = freezables.get(random.nextInt(freezables.size()));
                    victim.freeze();
                    sleep(faultFor);
                    victim.unfreeze();
                    freezes++;
                } else if (action < 7 && server.isPresent()) {
                    server.get().pause();
                    sleep(faultFor);
                    server.get().resume();
                    pauses++;
                } else if (action == 7 && cluster.isPresent()) {
                    cluster.get().killLeader();
                    sleep(faultFor);
                    cluster.get().restartKilled();
                    leaderKills++;
                } else if (action == 8 && server.isPresent() && restarts < 2) {
                    server.get().kill();
                    sleep(faultFor);
                    server.get().restart();
                    restarts++;
                    dataLossPossible = true;
                }
                if (System.nanoTime() - lastProgress > TimeUnit.SECONDS.toNanos(10)) {
                    lastProgress = System.nanoTime();
                    System.out.println("[dlock-tck] N1 " + fixture().name() + ": " + millis(end - System.nanoTime()) / 1000
                            + " s left, register at " + register.value());
                }
            }
        } finally {
            freezables.forEach(FreezableClient::unfreeze);
            stop.set(true);
            for (Worker w : workers) {
                w.finish(patience().multipliedBy(2));
            }
        }
        History.Verdict verdict = History.check(history.events(), register.log(), register.value());
        System.out.println("[dlock-tck] N1 " + fixture().name() + " (seed " + seed() + ", " + duration + "): " + freezes
                + " client stalls, " + pauses + " server pauses, " + restarts + " server restarts, " + leaderKills
                + " leader kills; " + verdict);
        writeFigures(duration, freezes, pauses, restarts, leaderKills, verdict);
        assertTrue(verdict.grants() > 0, Rule.N1.failure("no grant at all in " + duration));
        assertEquals(0, verdict.staleAccepted(), Rule.N1.failure(verdict.toString()));
        assertEquals(0, verdict.lostUpdates(), Rule.N1.failure(verdict.toString()));
        if (!dataLossPossible || claimsFailover) {
            assertEquals(0, verdict.overlaps(), Rule.N1.failure(verdict.toString()));
        }
    }

    /** Keeps the figures of the last randomized run next to the report, for docs/COMPATIBILITY.md. */
    private void writeFigures(Duration duration, int freezes, int pauses, int restarts, int leaderKills, History.Verdict v) {
        String dir = System.getProperty("dlock.tck.reportDir");
        if (dir == null || dir.isBlank() || !fixture().reportable()) {
            return;
        }
        String line = String.join("\t", fixture().name(), duration.toString(), Long.toString(seed()), Integer.toString(freezes),
                Integer.toString(pauses), Integer.toString(restarts), Integer.toString(leaderKills), Integer.toString(v.grants()),
                Integer.toString(v.staleRejected()), Integer.toString(v.staleAccepted()), Integer.toString(v.lostUpdates()),
                Integer.toString(v.overlaps()));
        TckReport.writeNemesisFigures(java.nio.file.Path.of(dir), fixture().name(), duration, line);
    }
}
