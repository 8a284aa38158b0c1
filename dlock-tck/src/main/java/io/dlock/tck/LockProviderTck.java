package io.dlock.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.Capability;
import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockConfigurationException;
import io.dlock.LockHolder;
import io.dlock.LockLostException;
import io.dlock.LockOptions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The compatibility kit's core suite: safety (S), liveness (L) and input (V) rules that every
 * provider must pass. A provider author subclasses it and supplies a {@link TckFixture}; test
 * methods are final in spirit: do not override them.
 *
 * <pre>{@code
 * class MyStoreTckTest extends LockProviderTck {
 *     protected TckFixture createFixture() { return new MyStoreFixture(); }
 * }
 * }</pre>
 *
 * <p>Each test is named after the rule it checks, prints what to check when it fails, and is
 * skipped (not failed) when the provider lacks the capability or the fixture lacks the fault
 * hook the rule needs. Randomness uses the seed in the system property {@code dlock.tck.seed}
 * (printed at start). Timing bounds are generous multiples of the fixture's lease time and
 * operation timeout, with the reason next to each; the TCK never measures speed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)public abstract class LockProviderTck extends BackendRules {

    /** Creates the suite; subclasses supply the fixture in {@link #createFixture()}. */
    protected LockProviderTck() { }

    /** Hammers one lock name from the given clients, recording proven holds. */
    private HoldLog contend(Rule rule, List<LockClient> clients, int threadsPerClient, int grantsPerThread)
            throws Exception {
        String name = name(rule);
        HoldLog log = new HoldLog();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        SplittableRandom root = new SplittableRandom(seed());
        List<SplittableRandom> randoms = new ArrayList<>();
        for (int i = 0; i < clients.size() * threadsPerClient; i++) {
            randoms.add(root.split());
        }
        Duration wait = lease().multipliedBy(20).plus(Duration.ofSeconds(10));
        runConcurrently(clients.size() * threadsPerClient, rule.name(), wait.multipliedBy(grantsPerThread), i -> {
            LockClient c = clients.get(i % clients.size());
            DistributedLock lock = c.lock(name);
            SplittableRandom random = randoms.get(i);
            for (int g = 0; g < grantsPerThread; g++) {
                Optional<Lease> lease = lock.tryAcquire(wait);
                if (lease.isEmpty()) {
                    fail(rule.failure("a contender waited " + wait + " without a grant (client " + i % clients.size() + ")"));
                }
                try (Lease l = lease.get()) {
                    long start = log.enter(l);
                    int now = inside.incrementAndGet();
                    maxInside.accumulateAndGet(now, Math::max);
                    Thread.sleep(random.nextInt(4));
                    inside.decrementAndGet();
                    log.exit("client " + i % clients.size() + " thread " + i, l, start);
                }
            }
        });
        int total = clients.size() * threadsPerClient * grantsPerThread;
        assertEquals(total, log.holds().size() + log.unproven(), "every grant was recorded");
        assertTrue(log.holds().size() >= total / 2, rule.failure("only " + log.holds().size() + " of " + total
                + " holds kept their validity from entry to exit; with no faults injected, leases should stay valid"));
        log.overlap().ifPresent(o -> fail(rule.failure(o)));
        if (log.unproven() == 0) {
            assertEquals(1, maxInside.get(), rule.failure("two holders were inside the critical section at once"));
        }
        return log;
    }

    // ------------------------------------------------------------------ safety

    /**
     * S1: many clients and threads contending for one name never hold it at the same time.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void S1_exclusionUnderContention() throws Exception {
        List<LockClient> clients = List.of(client(), client(), client());
        HoldLog log = contend(Rule.S1, clients, 3, 8);
        System.out.println("[dlock-tck] S1: " + log.holds().size() + " proven holds, no overlap");
    }

    /**
     * S2: tokens strictly increase across holders, clients, client restarts and expiry.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void S2_tokensStrictlyIncrease() throws Exception {
        requireFencing(Rule.S2);
        String name = name(Rule.S2);
        List<Long> tokens = new ArrayList<>();
        LockClient a = client();
        LockClient b = client();
        for (int round = 0; round < 3; round++) {
            for (LockClient c : List.of(a, b)) {
                try (Lease l = c.lock(name).tryAcquire(lease()).orElseThrow(
                        () -> new AssertionError(Rule.S2.failure("a free lock was not granted")))) {
                    tokens.add(l.fencingToken());
                }
            }
        }
        // a client restart: a brand-new client must still get a larger token
        a.close();
        LockClient restarted = client();
        try (Lease l = restarted.lock(name).tryAcquire(lease()).orElseThrow()) {
            tokens.add(l.fencingToken());
        }
        // expiry instead of release: the next grant still gets a larger token
        Lease expiring = restarted.lock(name, noRenew()).tryAcquire(lease()).orElseThrow();
        tokens.add(expiring.fencingToken());
        try (Lease l = b.lock(name).tryAcquire(lease().multipliedBy(4)).orElseThrow(
                () -> new AssertionError(Rule.S2.failure("an expired lease was never freed")))) {
            tokens.add(l.fencingToken());
        }
        for (int i = 1; i < tokens.size(); i++) {
            if (tokens.get(i) <= tokens.get(i - 1)) {
                fail(Rule.S2.failure("grant " + i + " got token " + tokens.get(i) + " after token " + tokens.get(i - 1)
                        + " (all tokens in grant order: " + tokens + ")"));
            }
            assertTrue(tokens.get(i) > 0, Rule.S2.failure("a token was not positive: " + tokens));
        }
        // and under contention, in the order the holds happened
        HoldLog log = contend(Rule.S2, List.of(b, restarted, client()), 2, 5);
        log.tokenRegression().ifPresent(r -> fail(Rule.S2.failure(r)));
    }

    /**
     * S3: a release or renewal by a lease that expired or was superseded leaves the new holder alone.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void S3_staleReleaseAndRenewAreNoOps() throws Exception {
        String name = name(Rule.S3);
        LockClient a = client();
        LockClient b = client();
        LockClient c = client();
        Lease stale = a.lock(name, noRenew()).tryAcquire(lease()).orElseThrow();
        // b gets the lock once the server has expired a's lease
        Lease current = b.lock(name).tryAcquire(lease().multipliedBy(4)).orElseThrow(
                () -> new AssertionError(Rule.S3.failure("an unrenewed lease was never freed")));
        stale.release();
        assertTrue(c.lock(name).tryAcquire().isEmpty(), Rule.S3.failure(
                "after the expired holder released, a third client got the lock that the new holder still holds"));
        checkHolder(c, name, current);
        assertTrue(current.isValid(), Rule.S3.failure("the new holder's lease became invalid after a stale release"));
        current.release();

        // stale renew and release, delivered late by a stalled network
        FreezableClient frozen = freezable("S3 (stale renew)");
        String name2 = name(Rule.S3);
        frozen.client().lock(name2).tryAcquire(lease()).orElseThrow();
        frozen.freeze();
        Lease next = b.lock(name2).tryAcquire(lease().multipliedBy(4).plus(opTimeout())).orElseThrow(
                () -> new AssertionError(Rule.S3.failure("a frozen holder's lease was never freed")));
        frozen.unfreeze(); // the renewals and the release it sent while frozen now reach the server
        sleep(lease().dividedBy(2));
        assertTrue(c.lock(name2).tryAcquire().isEmpty(), Rule.S3.failure(
                "requests the old holder sent while its network was stalled freed or stole the new holder's lock"));
        checkHolder(c, name2, next);
        sleep(lease().multipliedBy(3).dividedBy(2));
        assertTrue(next.isValid(), Rule.S3.failure("the new holder lost its lease after the old holder's stale requests"));
        assertTrue(c.lock(name2).tryAcquire().isEmpty(), Rule.S3.failure("the new holder's lock was freed by stale requests"));
    }

    private void checkHolder(LockClient observer, String name, Lease expected) {
        checkHolder(Rule.S3, observer, name, expected);
    }

    private static void checkHolder(Rule rule, LockClient observer, String name, Lease expected) {
        if (observer.capabilities().contains(Capability.HOLDER_QUERY)) {
            Optional<LockHolder> h = observer.holder(name);
            assertTrue(h.isPresent(), rule.failure("holder(" + name + ") says the lock is free while it is held"));
            assertEquals(expected.ownerId(), h.get().ownerId(), rule.failure("holder() names someone other than the current holder"));
        }
    }

    /**
     * S4: an acquire that times out, is interrupted or cancelled leaves nothing held or queued.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void S4_abandonedAcquiresStrandNothing() throws Exception {
        String name = name(Rule.S4);
        LockClient a = client();
        LockClient b = client();
        LockClient d = client();
        Lease held = a.lock(name).tryAcquire(lease()).orElseThrow();

        // timeout
        assertTrue(b.lock(name).tryAcquire(lease().dividedBy(4)).isEmpty(), "the lock is held, so the wait must time out");

        // interrupt
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                b.lock(name).tryAcquire(Duration.ofSeconds(30)).ifPresent(Lease::release);
            } catch (Throwable t) {
                thrown.set(t);
            }
        }, "dlock-tck-S4-waiter");
        waiter.start();
        sleep(Duration.ofMillis(200));
        waiter.interrupt();
        waiter.join(opTimeout().toMillis() + 2000); // generous: the wait must notice the interrupt, at most after one backend call
        assertFalse(waiter.isAlive(), Rule.S4.failure("an interrupted acquire kept waiting"));
        assertTrue(thrown.get() instanceof InterruptedException,
                Rule.S4.failure("an interrupted acquire must throw InterruptedException, threw " + thrown.get()));

        // cancel
        CompletableFuture<Optional<Lease>> cancelled = b.lock(name).acquireAsync(Duration.ofSeconds(30));
        sleep(Duration.ofMillis(200));
        assertTrue(cancelled.cancel(true), "the future was still pending");

        // none of the three that gave up may have touched the holder's grant
        assertTrue(held.isValid(), Rule.S4.failure("the holder's lease ended while waiters gave up"));
        assertTrue(d.lock(name).tryAcquire().isEmpty(), Rule.S4.failure("after waiters timed out, were interrupted and "
                + "were cancelled, another client got the lock the holder still holds (abandon() must only remove the "
                + "caller's own entry, owner-checked)"));
        checkHolder(Rule.S4, d, name, held);

        // the holder releases: a fresh client must get the lock at once, nothing left in its way
        held.release();
        long t0 = System.nanoTime();
        Optional<Lease> got = d.lock(name).tryAcquire(lease());
        assertTrue(got.isPresent(), Rule.S4.failure("after timed-out, interrupted and cancelled waiters gave up and the "
                + "holder released, another client could not get the lock within " + lease()));
        got.get().release();
        System.out.println("[dlock-tck] S4: lock free again " + millis(System.nanoTime() - t0) + " ms after release");

        // cancellation racing the grant: a grant that lands after cancel must be released
        for (int i = 0; i < 5; i++) {
            String raced = name(Rule.S4);
            Lease h = a.lock(raced).tryAcquire(lease()).orElseThrow();
            CompletableFuture<Optional<Lease>> f = b.lock(raced).acquireAsync(Duration.ofSeconds(30));
            sleep(Duration.ofMillis(50 + 20 * i));
            h.release();
            sleep(Duration.ofMillis(5 * i));
            boolean wasCancelled = f.cancel(true);
            if (!wasCancelled) {
                // it was granted before the cancel: the caller owns it, and releases it
                f.get(opTimeout().toMillis() + 2000, TimeUnit.MILLISECONDS).ifPresent(Lease::release);
            }
            // either way nothing stays held: the lease time is short, but a stranded grant would keep renewing
            Optional<Lease> after = d.lock(raced).tryAcquire(lease().multipliedBy(2).plus(opTimeout()));
            assertTrue(after.isPresent(), Rule.S4.failure("round " + i + ": after a cancel raced the grant, the lock stayed "
                    + "held (a grant that arrives after cancellation must be released)"));
            after.get().release();
        }

        // a grant whose answer was lost: the request reached the server, the answer never came back,
        // so the core gave up and abandoned. The lease asked for is long (ten lease times, no
        // renewal), so only abandon() can explain the lock being free soon after.
        Optional<FreezableClient> lossy = fixture().openFreezable(config());
        if (lossy.isPresent() && lossy.get().faults().contains(NetworkFault.DROP_ANSWERS)) {
            opened.add(lossy.get());
            String lost = name(Rule.S4);
            LockClient lc = lossy.get().client();
            // a session-bound backend gets its longest lease: its stray would live as long as the session anyway
            LockOptions longLease = longLease(lc, 10, false);
            lc.lock(lost + "-warm-up").tryAcquire().ifPresent(Lease::release); // connections up before the fault
            lossy.get().inject(NetworkFault.DROP_ANSWERS);
            try {
                Optional<Lease> none = lc.lock(lost, longLease).tryAcquire(Duration.ZERO);
                none.ifPresent(Lease::release);
                fail(Rule.S4.failure("an acquire whose answers were lost returned " + none + " instead of failing"));
            } catch (LockBackendException expected) {
                // the outcome is unknown to the client: it must fail, and abandon() must undo the grant
            } finally {
                lossy.get().heal();
            }
            long healedAt = System.nanoTime();
            // generous: abandon() runs on the failing call's thread or in the background within the operation
            // timeout, possibly after reconnecting; still far below the ten lease times a kept grant would last
            Duration patience = lease().multipliedBy(2).plus(opTimeout().multipliedBy(2));
            Optional<Lease> free = d.lock(lost).tryAcquire(patience);
            assertTrue(free.isPresent(), Rule.S4.failure("a grant whose answer was lost was still held "
                    + millis(System.nanoTime() - healedAt) + " ms after the network healed; abandon() must remove it "
                    + "(owner-checked) rather than leave it to expire after its lease of " + longLease.leaseTime()));
            free.get().release();
            System.out.println("[dlock-tck] S4: lost-answer grant removed; lock free " + millis(System.nanoTime() - healedAt)
                    + " ms after the network healed");
        }
    }

    /**
     * S5: threads that share one client exclude each other, and so do owners that share one
     * backend connection.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void S5_threadsSharingOneClientExcludeEachOther() throws Exception {
        HoldLog log = contend(Rule.S5, List.of(client()), 8, 6);
        System.out.println("[dlock-tck] S5: " + log.holds().size() + " proven holds by 8 threads of one client, no overlap");
        ownersOnOneConnectionExcludeEachOther();
    }

    /**
     * S6: distinct names never share a lock, however alike they look.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void S6_namesMapInjectively() throws Exception {
        String p = name(Rule.S6) + "-";
        List<String> names = new ArrayList<>(List.of(
                p + "a", p + "A", p + "a/b", p + "a%2Fb", p + "a%2fb", p + "a_2Fb", p + "a\\b", p + "a b", p + "a+b",
                p + "a*", p + "a?", p + "a:b", p + "a::b", p + ".", p + "..", p + "/", p + "//", p + "a/", p + "/a",
                p + "ünïcödé", p + "unicode", p + "名前", p + "\uD83D\uDD12", p + "%", p + "%25", p + "fence", p + "lock-0000000001",
                p + "prefix", p + "prefix-longer", p + "prefix:", p + "{tag}", p + "zookeeper",
                ".", "..", "/", "zookeeper"));
        String longName = p + "x".repeat(512 - p.length());
        names.add(longName);
        names.add(longName.substring(0, longName.length() - 1));
        names.add(longName.substring(0, longName.length() - 1) + "y");
        assertEquals(names.size(), new HashSet<>(names).size(), "the TCK's names are distinct");
        LockClient a = client();
        LockClient b = client();
        List<Lease> leases = new ArrayList<>();
        try {
            for (String n : names) {
                Optional<Lease> l = a.lock(n).tryAcquire(lease());
                assertTrue(l.isPresent(), Rule.S6.failure("'" + n + "' was not granted after other names were taken: "
                        + "two names share one lock"));
                leases.add(l.get());
            }
            for (String n : names) {
                assertTrue(b.lock(n).tryAcquire().isEmpty(), Rule.S6.failure("'" + n + "' is held but another client got it"));
            }
        } finally {
            leases.forEach(Lease::release);
        }
        for (String n : names) {
            Optional<Lease> l = b.lock(n).tryAcquire(lease());
            assertTrue(l.isPresent(), Rule.S6.failure("'" + n + "' was released but could not be taken again"));
            l.get().release();
        }
    }

    /**
     * S7: a holder cut off from the backend is told it lost the lock before anyone else can get it.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void S7_lostLeaseReportedNoLaterThanServerExpiry() throws Exception {
        String name = name(Rule.S7);
        FreezableClient holder = freezable("S7");
        LockClient other = client();
        Lease lease = holder.client().lock(name).tryAcquire(lease()).orElseThrow();
        // frozen after its first renewals: what the server keeps then is what renew extended, not the grant
        sleep(lease().multipliedBy(4).dividedBy(5));
        checkLostFirst("a holder frozen after renewing", holder, lease, other, name, false);

        // a waiter's grant: the lock passes from a holder to a waiting client, which is frozen at once. Whether the
        // server granted it while the attempt waited for its turn or on the next tryOnce, its validity may not outlast the server's lease.
        String handed = name(Rule.S7);
        FreezableClient waiter = freezable("S7");
        Lease first = other.lock(handed).tryAcquire(lease()).orElseThrow();
        CompletableFuture<Optional<Lease>> waiting = waiter.client().lock(handed).acquireAsync(lease().multipliedBy(10));
        sleep(lease()); // the waiter is waiting now, its backoff grown to its cap
        first.release();
        Lease got = waiting.get(lease().multipliedBy(4).plus(opTimeout()).toMillis(), TimeUnit.MILLISECONDS).orElseThrow(
                () -> new AssertionError(Rule.S7.failure("a waiter did not get a released lock")));
        // the other client polls with single attempts: its own grant may not be delayed by the same path
        checkLostFirst("a waiter frozen right after its grant", waiter, got, client(), handed, true);
    }

    private static boolean pause(Duration d) {
        sleep(d);
        return true;
    }

    /** Freezes the holder's network; when another client gets the lock, the holder must have been told. */
    private void checkLostFirst(String what, FreezableClient holder, Lease lease, LockClient other, String name,
                                boolean poll) throws InterruptedException {
        AtomicLong lostAt = new AtomicLong();
        AtomicReference<LockLostException> event = new AtomicReference<>();
        lease.onLost(e -> {
            lostAt.compareAndSet(0, System.nanoTime());
            event.set(e);
        });
        long frozenAt = System.nanoTime();
        holder.freeze();
        Duration patience = lease().multipliedBy(4).plus(opTimeout());
        Optional<Lease> taken;
        if (poll) {
            long deadline = System.nanoTime() + patience.toNanos();
            do {
                taken = other.lock(name).tryAcquire();
            } while (taken.isEmpty() && System.nanoTime() - deadline < 0 && pause(Duration.ofMillis(5)));
        } else {
            taken = other.lock(name).tryAcquire(patience);
        }
        long takenAt = System.nanoTime();
        boolean stillValid = lease.isValid();
        assertTrue(taken.isPresent(), Rule.S7.failure(what + ": the lock was never freed on the server"));
        assertFalse(stillValid, Rule.S7.failure(what + ": its lease was still valid when another client got the lock"));
        assertTrue(lostAt.get() != 0, Rule.S7.failure(what + ": onLost had not fired when another client got the lock"));
        assertTrue(lostAt.get() - takenAt <= 0, Rule.S7.failure(what + ": onLost fired after another client got the lock"));
        assertThrows(LockLostException.class, lease::ensureValid, Rule.S7.failure("ensureValid() did not throw on a lost lease"));
        assertEquals(lease.fencingToken(), event.get().fencingToken(), "the event names the lost lease's token");
        AtomicReference<Thread> lateListener = new AtomicReference<>();
        lease.onLost(e -> lateListener.set(Thread.currentThread()));
        assertEquals(Thread.currentThread(), lateListener.get(), Rule.S7.failure("a listener added after the loss must "
                + "run at once, on the caller's thread"));
        System.out.println("[dlock-tck] S7 (" + what + "): lost reported " + millis(lostAt.get() - frozenAt)
                + " ms after the freeze, " + millis(takenAt - lostAt.get()) + " ms before another client got the lock");
        taken.get().release();
        holder.unfreeze();
    }

    /**
     * S8: a holder stalled past its lease is fenced off by the resource, and no acknowledged update is lost.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void S8_staleHolderIsFencedOff() throws Exception {
        requireFencing(Rule.S8);
        String name = name(Rule.S8);
        FreezableClient stalled = freezable("S8");
        LockClient other = client();
        FencedRegister register = new FencedRegister();
        Lease first = stalled.client().lock(name).tryAcquire(lease()).orElseThrow();
        long seen = register.read("first", first.fencingToken()).orElseThrow();
        // the first holder's process keeps running but nothing it sends gets through: to the server
        // this is a long GC pause; its lease expires and someone else takes over
        stalled.freeze();
        Lease second = other.lock(name).tryAcquire(lease().multipliedBy(4).plus(opTimeout())).orElseThrow(
                () -> new AssertionError(Rule.S8.failure("the stalled holder's lock was never freed")));
        long current = register.read("second", second.fencingToken()).orElseThrow(() -> new AssertionError(Rule.S8.failure(
                "the new holder's token " + second.fencingToken() + " was refused after token " + first.fencingToken())));
        assertTrue(register.write("second", second.fencingToken(), current + 1), Rule.S8.failure("the new holder's write was refused"));
        // the stalled holder wakes up and writes what it computed before the pause, with its old token
        boolean staleAccepted = register.write("first", first.fencingToken(), seen + 1);
        assertFalse(staleAccepted, Rule.S8.failure("the stalled holder's write with token " + first.fencingToken()
                + " was accepted after the new holder's token " + second.fencingToken()));
        History.Verdict verdict = History.check(List.of(), register.log(), register.value());
        assertEquals(0, verdict.staleAccepted(), Rule.S8.failure(verdict.toString()));
        assertEquals(current + 1, register.value(), Rule.S8.failure("the new holder's acknowledged update was lost"));
        System.out.println("[dlock-tck] S8: stale write with token " + first.fencingToken() + " rejected after token "
                + second.fencingToken());
        second.release();
    }

    /**
     * S10: a client whose wall clock is an hour off changes nothing.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void S10_skewedWallClockChangesNothing() throws Exception {
        String name = name(Rule.S10);
        Clock ahead = Clock.offset(Clock.systemUTC(), Duration.ofHours(1));
        Clock behind = Clock.offset(Clock.systemUTC(), Duration.ofHours(-1));
        LockClient fast = client(b -> b.clock(ahead));
        LockClient slow = client(b -> b.clock(behind));
        LockClient normal = client();

        // a holder an hour behind is not taken for expired by clients with the right time or one an hour ahead
        Lease held = slow.lock(name).tryAcquire(lease()).orElseThrow();
        long until = System.nanoTime() + lease().multipliedBy(3).toNanos();
        while (System.nanoTime() - until < 0) {
            assertTrue(fast.lock(name).tryAcquire().isEmpty(), Rule.S10.failure("a client an hour ahead took a renewed lock"));
            assertTrue(normal.lock(name).tryAcquire().isEmpty(), Rule.S10.failure("a client took a lock renewed by a client an hour behind"));
            sleep(lease().dividedBy(5));
        }
        assertTrue(held.isValid(), Rule.S10.failure("the skewed holder lost its renewed lease"));
        held.release();

        // an unrenewed lease of a client an hour ahead lasts its lease time, not an hour less or more.
        // Counted from before the grant's request: the server's lease starts no earlier, and a reading
        // after the acquire returned came late whenever this thread stalled in between (a loaded machine
        // made the hand-over look 180 ms early)
        long grantedAt = System.nanoTime();
        Lease unrenewed = fast.lock(name, noRenew()).tryAcquire(lease()).orElseThrow();
        Optional<Lease> next = slow.lock(name).tryAcquire(lease().multipliedBy(5));
        long waited = System.nanoTime() - grantedAt;
        assertTrue(next.isPresent(), Rule.S10.failure("a client an hour behind never got a lock whose holder, an hour ahead, stopped renewing"));
        // the waiter's grant cannot come before the holder's lease ended; 10% slack covers drift margins
        assertTrue(waited >= lease().toNanos() * 9 / 10, Rule.S10.failure("the lock changed hands " + millis(waited)
                + " ms after a grant with a lease of " + lease().toMillis() + " ms: the skew shortened the lease"));
        assertFalse(unrenewed.isValid(), "the first lease ran out");
        next.get().release();
    }

    // ------------------------------------------------------------------ liveness

    /**
     * L1: a waiter gets the lock promptly when the holder releases it.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void L1_releaseHandsOverPromptly() throws Exception {
        LockClient a = client();
        handOff("a waiter", a, client());
        if (a.capabilities().contains(Capability.NOTIFY_WAITERS)) {
            // a backend that declares it notifies waiters must not need polling: with every pause between attempts
            // drawn up to 30 s, only a notification wakes the waiter within the bound every time (a polling waiter
            // would pass three rounds by luck less than once in a thousand)
            LockClient slowPoller = client(c -> c.retry(Duration.ofSeconds(30), Duration.ofSeconds(30)));
            for (int round = 0; round < 3; round++) {
                handOff("a waiter whose polls are up to 30 s apart (NOTIFY_WAITERS), round " + (round + 1), a, slowPoller);
            }
        }
    }

    private void handOff(String what, LockClient a, LockClient b) throws Exception {
        String name = name(Rule.L1);
        // a lease ten times the TCK's, renewed: only the release can explain a hand-off within the bound
        Lease held = a.lock(name, longLease(a, 10)).tryAcquire(lease()).orElseThrow();
        AtomicLong grantedAt = new AtomicLong();
        Worker waiter = new Worker("L1-waiter", () -> {
            Optional<Lease> l = b.lock(name).tryAcquire(Duration.ofSeconds(60));
            grantedAt.set(System.nanoTime());
            assertTrue(l.isPresent(), Rule.L1.failure(what + " timed out"));
            l.get().release();
        });
        waiter.start();
        sleep(lease()); // the waiter is now waiting on the server, its backoff grown to its cap
        long releasedAt = System.nanoTime();
        held.release();
        waiter.finish(Duration.ofSeconds(60));
        long handOff = grantedAt.get() - releasedAt;
        System.out.println("[dlock-tck] L1: hand-off to " + what + " " + millis(handOff) + " ms");
        // generous: a notifying backend hands over in milliseconds, a polling one within its retry cap (250 ms in the
        // TCK) plus one round trip; 2 s leaves room for a loaded CI machine and is still well below "never"
        assertTrue(handOff < Duration.ofSeconds(2).toNanos(), Rule.L1.failure("hand-off to " + what + " took "
                + millis(handOff) + " ms"));
    }

    /**
     * L2: the lock of a holder that crashed without releasing frees after its lease, not before.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void L2_crashedHoldersLockFreesAfterTheLease() throws Exception {
        LockClient other = client();
        // crashed right after the grant: the server's lease is the one the grant started
        String name = name(Rule.L2);
        FreezableClient crashed = freezable("L2");
        long requestedAt = System.nanoTime();
        crashed.client().lock(name).tryAcquire(lease()).orElseThrow();
        long answeredAt = System.nanoTime();
        crashed.crash();
        long freedAt = freedAfterCrash("crashed after its grant", other, name, answeredAt);
        // the server may not free the lock before one lease time after the grant; 10% slack for drift margins
        assertTrue(freedAt - requestedAt >= lease().toNanos() * 9 / 10, Rule.L2.failure("the lock of a crashed holder "
                + "was freed " + millis(freedAt - requestedAt) + " ms after its grant was asked for, before its lease of "
                + lease().toMillis() + " ms ended"));

        // crashed after renewing for a while: the server's lease is the one the last renewal extended
        String renewed = name(Rule.L2);
        FreezableClient renewing = freezable("L2");
        renewing.client().lock(renewed).tryAcquire(lease()).orElseThrow();
        sleep(lease().multipliedBy(2));
        long crashedAt = System.nanoTime(); // every renewal answer the holder got came before this
        renewing.crash();
        freedAfterCrash("crashed after renewing for two lease times", other, renewed, crashedAt);
    }

    /**
     * Waits for a crashed holder's lock to free and checks it freed soon enough: by the time the
     * server last extended the lease plus one lease time, with slack.
     *
     * @return when another client got the lock
     */
    private long freedAfterCrash(String what, LockClient other, String name, long lastAnswerAt) throws Exception {
        // upper bound: the server's lease ends one lease time after it last extended it, which was before the holder's
        // last answer; slack: half a lease for servers that expire in coarse ticks (etcd, ZooKeeper), plus the
        // waiter's retry cap (250 ms) and a round trip. A server that keeps a lock twice the lease time fails this.
        long bound = lease().toNanos() + lease().toNanos() / 2 + Duration.ofMillis(300).toNanos();
        boolean observed = other.capabilities().contains(Capability.HOLDER_QUERY);
        Optional<Lease> next = other.lock(name).tryAcquire(lease().multipliedBy(4).plus(opTimeout()));
        long freedAt = System.nanoTime();
        assertTrue(next.isPresent(), Rule.L2.failure("the lock of a holder " + what + " was not freed within "
                + lease().multipliedBy(4).plus(opTimeout())));
        long after = freedAt - lastAnswerAt;
        System.out.println("[dlock-tck] L2: lock of a holder " + what + " freed " + millis(after) + " ms after its last "
                + "answer (lease " + lease().toMillis() + " ms, bound " + millis(bound) + " ms)");
        assertTrue(after <= bound, Rule.L2.failure("the lock of a holder " + what + " was freed only " + millis(after)
                + " ms after the holder's last answer, with a lease of " + lease().toMillis() + " ms: the server kept it "
                + "longer than the lease it was asked for"));
        if (observed) {
            Optional<LockHolder> h = other.holder(name);
            assertTrue(h.isPresent() && h.get().ownerId().equals(next.get().ownerId()), Rule.L2.failure(
                    "holder() does not show the client that took over the crashed holder's lock: " + h));
        }
        next.get().release();
        if (observed) {
            assertTrue(other.holder(name).isEmpty(), Rule.L2.failure("holder() shows a holder of a released lock"));
        }
        return freedAt;
    }

    /**
     * L3: automatic renewal keeps a lock for many lease times.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void L3_autoRenewalHoldsForManyLeaseTimes() throws Exception {
        String name = name(Rule.L3);
        LockClient a = client();
        LockClient b = client();
        Lease held = a.lock(name).tryAcquire(lease()).orElseThrow();
        // three more locks taken back to back: their renewals come due together and go out as one batch
        List<Lease> batch = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            batch.add(a.lock(name + "-" + i).tryAcquire(lease()).orElseThrow());
        }
        long until = System.nanoTime() + lease().multipliedBy(5).toNanos();
        int checks = 0;
        while (System.nanoTime() - until < 0) {
            assertTrue(held.isValid(), Rule.L3.failure("the renewed lease became invalid after "
                    + checks + " checks"));
            assertTrue(b.lock(name).tryAcquire().isEmpty(), Rule.L3.failure("another client got a lock that was being renewed"));
            for (Lease l : batch) {
                assertTrue(l.isValid(), Rule.L3.failure("a lease renewed in a batch became invalid after " + checks + " checks"));
                assertTrue(b.lock(l.lockName()).tryAcquire().isEmpty(), Rule.L3.failure("another client got a lock that "
                        + "was being renewed in a batch with others"));
            }
            checks++;
            sleep(lease().dividedBy(10));
        }
        assertTrue(held.remaining().compareTo(Duration.ZERO) > 0, "a renewed lease has time left");
        held.release();
        batch.forEach(Lease::release);
        assertTrue(b.lock(name).tryAcquire(lease()).map(l -> {
            l.release();
            return true;
        }).orElse(false), Rule.L3.failure("after release, the lock could not be taken"));
    }

    /**
     * L4: a wait for a held lock ends when it should, neither early nor much late.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void L4_waitTimeoutsHonoured() throws Exception {
        String name = name(Rule.L4);
        LockClient a = client();
        LockClient b = client();
        Lease held = a.lock(name).tryAcquire(lease()).orElseThrow();
        Duration wait = Duration.ofMillis(700);
        // generous: one backend call may be in flight when the deadline passes, plus scheduling on a loaded machine
        long late = opTimeout().plus(Duration.ofSeconds(1)).toNanos();

        long t0 = System.nanoTime();
        assertTrue(b.lock(name).tryAcquire().isEmpty(), "held by another client");
        long zero = System.nanoTime() - t0;
        assertTrue(zero < late, Rule.L4.failure("tryAcquire() took " + millis(zero) + " ms on a held lock"));

        t0 = System.nanoTime();
        assertTrue(b.lock(name).tryAcquire(wait).isEmpty(), "held by another client");
        long waited = System.nanoTime() - t0;
        assertTrue(waited >= wait.toNanos(), Rule.L4.failure("tryAcquire(" + wait + ") gave up after " + millis(waited) + " ms"));
        assertTrue(waited < wait.toNanos() + late, Rule.L4.failure("tryAcquire(" + wait + ") took " + millis(waited) + " ms"));

        t0 = System.nanoTime();
        CompletableFuture<Optional<Lease>> f = b.lock(name).acquireAsync(wait);
        Optional<Lease> r = f.get(wait.toMillis() + TimeUnit.NANOSECONDS.toMillis(late) + 5000, TimeUnit.MILLISECONDS);
        long asyncWaited = System.nanoTime() - t0;
        assertTrue(r.isEmpty(), "held by another client");
        assertTrue(asyncWaited >= wait.toNanos(), Rule.L4.failure("acquireAsync(" + wait + ") gave up after " + millis(asyncWaited) + " ms"));
        assertTrue(asyncWaited < wait.toNanos() + late, Rule.L4.failure("acquireAsync(" + wait + ") took " + millis(asyncWaited) + " ms"));
        System.out.println("[dlock-tck] L4: tryAcquire() " + millis(zero) + " ms, tryAcquire(700 ms) " + millis(waited)
                + " ms, acquireAsync(700 ms) " + millis(asyncWaited) + " ms");
        held.release();
    }

    /**
     * L5: every contender eventually wins; with FAIR, in arrival order.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void L5_everyContenderEventuallyWins() throws Exception {
        String name = name(Rule.L5);
        LockClient holderClient = client();
        List<LockClient> contenders = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            contenders.add(client());
        }
        Lease first = holderClient.lock(name).tryAcquire(lease()).orElseThrow();
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        List<Worker> workers = new ArrayList<>();
        for (int i = 0; i < contenders.size(); i++) {
            int index = i;
            Worker w = new Worker("L5-" + i, () -> {
                // the last contender waits with acquire(), which waits as long as it takes
                Optional<Lease> l = index == contenders.size() - 1
                        ? Optional.of(contenders.get(index).lock(name).acquire())
                        : contenders.get(index).lock(name).tryAcquire(Duration.ofSeconds(60));
                assertTrue(l.isPresent(), Rule.L5.failure("contender " + index + " never got the lock"));
                order.add(index);
                Thread.sleep(20);
                l.get().release();
            });
            workers.add(w);
            w.start();
            sleep(Duration.ofMillis(150)); // arrivals well apart, so that arrival order is defined
        }
        first.release();
        for (Worker w : workers) {
            w.finish(Duration.ofSeconds(60));
        }
        assertEquals(contenders.size(), order.size(), Rule.L5.failure("not every contender won: " + order));
        if (holderClient.capabilities().contains(Capability.FAIR)) {
            List<Integer> expected = new ArrayList<>();
            for (int i = 0; i < contenders.size(); i++) {
                expected.add(i);
            }
            assertEquals(expected, order, Rule.L5.failure("a FAIR backend granted out of arrival order"));
        }
        System.out.println("[dlock-tck] L5: grant order " + order
                + (holderClient.capabilities().contains(Capability.FAIR) ? " (FAIR: must be arrival order)" : ""));
    }

    /**
     * L7: close() releases held locks, fails pending waits, and leaves no thread behind.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void L7_closeReleasesLocksAndLeaksNoThreads() throws Exception {
        String n1 = name(Rule.L7);
        String n2 = name(Rule.L7);
        LockClient other = client();
        LockClient warmUp = LockClient.open(config().build());
        warmUp.lock(n1).tryAcquire().ifPresent(Lease::release);
        warmUp.close(); // static pools and timers of client libraries start on first use; they are not leaks
        Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());

        LockClient closing = LockClient.open(config().build());
        // leases of ten lease times where the backend allows them: then no expiry, however the
        // timing falls, can free the locks within the wait below; only the release by close() can
        LockOptions longLease = longLease(closing, 10);
        Lease l1 = closing.lock(n1, longLease).tryAcquire(lease()).orElseThrow();
        closing.lock(n2, longLease).tryAcquire(lease()).orElseThrow();
        Lease blocker = other.lock(n1 + "-busy").tryAcquire(lease()).orElseThrow();
        CompletableFuture<Optional<Lease>> pending = closing.lock(n1 + "-busy").acquireAsync(Duration.ofSeconds(30));
        sleep(Duration.ofMillis(200));
        closing.close();

        assertFalse(l1.isValid(), "a lease of a closed client is not valid");
        for (String n : List.of(n1, n2)) {
            // less than one lease time, far less than the leases: only the release by close() can explain getting it
            Optional<Lease> got = other.lock(n).tryAcquire(lease().multipliedBy(3).dividedBy(4));
            assertTrue(got.isPresent(), Rule.L7.failure("'" + n + "' was still held after its client closed"));
            got.get().release();
        }
        try {
            Optional<Lease> r = pending.get(5, TimeUnit.SECONDS);
            r.ifPresent(Lease::release);
            fail(Rule.L7.failure("a wait pending on a closed client completed with " + r));
        } catch (ExecutionException | CancellationException e) {
            // expected: the wait failed because the client closed
        } catch (TimeoutException e) {
            fail(Rule.L7.failure("a wait pending on a closed client never completed"));
        }
        assertThrows(IllegalStateException.class, () -> closing.lock(n1), Rule.L7.failure("a closed client handed out a lock"));
        blocker.release();
        other.close(); // its threads also started after the snapshot: with both closed, any new thread is a leak

        List<String> leaked = new ArrayList<>();
        // generous: thread pools finish their last task and exit; 5 s covers a slow CI machine
        boolean clean = await(() -> {
            leaked.clear();
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (!before.contains(t) && t.isAlive() && !t.getName().startsWith("dlock-tck-")) {
                    leaked.add(t.getName());
                }
            }
            return leaked.isEmpty();
        }, Duration.ofSeconds(5));
        assertTrue(clean, Rule.L7.failure("threads still alive after close(): " + leaked));
    }

    /**
     * L8: three clients that each re-acquire one lock in a tight loop, releasing and asking again at
     * once, all keep getting it: no waiter waits more than a bounded time while the others cycle.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void L8_noContenderStarves() throws Exception {
        String name = name(Rule.L8);
        List<LockClient> clients = List.of(client(), client(), client());
        // a waiter queued behind the two others waits for at most their holds and hand-offs; two lease times plus
        // the operation timeout plus a second is far more than that, and far less than "starved"
        Duration bound = lease().multipliedBy(2).plus(opTimeout()).plus(Duration.ofSeconds(1));
        long runFor = Duration.ofSeconds(3).plus(lease().multipliedBy(2)).toNanos();
        long[] grants = new long[clients.size()];
        long[] longestWait = new long[clients.size()];
        runConcurrently(clients.size(), "L8", Duration.ofNanos(runFor).plus(bound.multipliedBy(2)), i -> {
            DistributedLock lock = clients.get(i).lock(name);
            long until = System.nanoTime() + runFor;
            while (System.nanoTime() - until < 0) {
                long t0 = System.nanoTime();
                Optional<Lease> l = lock.tryAcquire(bound);
                long waited = System.nanoTime() - t0;
                longestWait[i] = Math.max(longestWait[i], waited);
                assertTrue(l.isPresent(), Rule.L8.failure("client " + i + " waited " + bound.toMillis() + " ms without a "
                        + "grant while the two others kept re-acquiring the lock (grants so far: "
                        + Arrays.toString(grants) + ")"));
                grants[i]++;
                Thread.sleep(5);
                l.get().release(); // and ask again at once
            }
        });
        System.out.println("[dlock-tck] L8: grants per client " + Arrays.toString(grants) + ", longest waits "
                + Arrays.stream(longestWait).map(TckSupport::millis).boxed().toList() + " ms");
    }

    /**
     * L10: four hundred threads waiting through one client for two hundred busy locks add at most
     * {@value #L10_MAX_THREADS} threads to the JVM: the client's threads do not grow with its
     * waiters. (The core lets one waiter per lock and client wait on the backend, so two hundred
     * waits reach it at once; a bounded pool of a few dozen threads passes, a thread per wait does
     * not.) The rule then frees the locks and every waiter must get its lock.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void L10_threadsDoNotGrowWithWaiters() throws Exception {
        int locks = 200;
        int waiters = 2 * locks;
        LockClient holding = client();
        LockClient waiting = client();
        List<String> names = new ArrayList<>();
        List<Lease> held = new ArrayList<>();
        for (int i = 0; i < locks; i++) {
            names.add(name(Rule.L10));
            // long leases: the holder's renewals must not compete with the waiters for the backend
            held.add(holding.lock(names.get(i), longLease(holding, 10)).tryAcquire(lease()).orElseThrow());
        }
        // the waiting client's own machinery starts on first use: a wait on a busy lock starts it before the count
        Optional<Lease> warm = waiting.lock(names.get(0)).tryAcquire(lease().dividedBy(4));
        warm.ifPresent(Lease::release);
        Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
        AtomicInteger granted = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        // long enough for the counting (two lease times) and then two hundred hand-overs of two waiters each
        Duration wait = Duration.ofSeconds(60).plus(lease().multipliedBy(4));
        for (int i = 0; i < waiters; i++) {
            String n = names.get(i % locks);
            Thread t = new Thread(() -> {
                try {
                    waiting.lock(n).tryAcquire(wait).ifPresent(l -> {
                        granted.incrementAndGet();
                        l.release();
                    });
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "dlock-tck-L10-waiter-" + i);
            threads.add(t);
            t.start();
        }
        int most = 0;
        List<String> extra = new ArrayList<>();
        // every waiter waits through a few backoff rounds (two lease times) while the threads are counted
        long until = System.nanoTime() + lease().multipliedBy(2).toNanos();
        while (System.nanoTime() - until < 0) {
            List<String> now = new ArrayList<>();
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (!before.contains(t) && t.isAlive() && !t.getName().startsWith("dlock-tck-")) {
                    now.add(t.getName());
                }
            }
            if (now.size() > most) {
                most = now.size();
                extra = now;
            }
            sleep(Duration.ofMillis(20));
        }
        held.forEach(Lease::release);
        for (Thread t : threads) {
            t.join(wait.plusSeconds(10).toMillis());
        }
        System.out.println("[dlock-tck] L10: " + waiters + " waiters on " + locks + " busy locks through one client added "
                + most + " threads at most; " + granted + " got their lock after the release");
        assertTrue(most <= L10_MAX_THREADS, Rule.L10.failure(waiters + " waiters through one client added " + most
                + " threads (at most " + L10_MAX_THREADS + " allowed): " + new java.util.TreeSet<>(extra)));
        assertEquals(waiters, granted.get(), Rule.L10.failure("only " + granted + " of " + waiters
                + " waiters got their lock once the locks were free"));
    }

    /** The most threads {@link #L10_threadsDoNotGrowWithWaiters()} allows four hundred waiters to add. */
    static final int L10_MAX_THREADS = 64;

    /**
     * L11: two thousand asynchronous acquisitions pending through one client (five hundred on one
     * busy lock, fifteen on each of a hundred others) add at most {@value #L10_MAX_THREADS} threads
     * to the JVM: a pending {@code acquireAsync} holds no thread, neither in the client's local
     * queue nor between tries on the server, where the first waiter of each lock waits (a hundred
     * and one waits reach the backend at once; a thread per wait fails). Then half of them are
     * cancelled, among them the server-side waiter of every other lock, the locks are freed, and
     * every remaining waiter must get its lock, in the order it asked for it, and leave nothing
     * held.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void L11_asyncWaitsHoldNoThread() throws Exception {
        int locks = 101;
        LockClient holding = client();
        LockClient waiting = client();
        List<String> names = new ArrayList<>();
        List<Lease> held = new ArrayList<>();
        for (int i = 0; i < locks; i++) {
            names.add(name(Rule.L11));
            // long leases: the holder's renewals must not compete with the waiters for the backend
            held.add(holding.lock(names.get(i), longLease(holding, 10)).tryAcquire(lease()).orElseThrow());
        }
        // the waiting client's own machinery starts on first use: a wait on a busy lock starts it before the count
        waiting.lock(names.get(0)).acquireAsync(lease().dividedBy(4))
                .get(lease().plus(opTimeout()).plusSeconds(5).toMillis(), TimeUnit.MILLISECONDS).ifPresent(Lease::release);
        Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
        // far longer than the rule can take: a waiter that runs out of it has not been served
        Duration wait = Duration.ofMinutes(10);
        List<List<CompletableFuture<Optional<Lease>>>> futures = new ArrayList<>();
        List<List<CompletableFuture<Void>>> served = new ArrayList<>();
        List<List<Integer>> order = new ArrayList<>();
        AtomicInteger empty = new AtomicInteger();
        int total = 0;
        for (int l = 0; l < locks; l++) {
            List<CompletableFuture<Optional<Lease>>> fs = new ArrayList<>();
            List<CompletableFuture<Void>> ss = new ArrayList<>();
            List<Integer> got = Collections.synchronizedList(new ArrayList<>());
            DistributedLock lock = waiting.lock(names.get(l));
            for (int i = 0; i < (l == 0 ? 500 : 15); i++) {
                int index = i;
                CompletableFuture<Optional<Lease>> f = lock.acquireAsync(wait);
                fs.add(f);
                ss.add(f.thenAccept(lease -> {
                    if (lease.isEmpty()) {
                        empty.incrementAndGet();
                        return;
                    }
                    got.add(index);
                    lease.get().release(); // the next waiter's turn
                }));
                total++;
            }
            futures.add(fs);
            served.add(ss);
            order.add(got);
        }
        int most = 0;
        List<String> extra = new ArrayList<>();
        // every server-side waiter waits through a few backoff rounds (two lease times) while the threads are counted
        long until = System.nanoTime() + lease().multipliedBy(2).toNanos();
        while (System.nanoTime() - until < 0) {
            List<String> now = new ArrayList<>();
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (!before.contains(t) && t.isAlive() && !t.getName().startsWith("dlock-tck-")) {
                    now.add(t.getName());
                }
            }
            if (now.size() > most) {
                most = now.size();
                extra = now;
            }
            sleep(Duration.ofMillis(20));
        }
        System.out.println("[dlock-tck] L11: " + total + " asynchronous waiters on " + locks + " busy locks through one "
                + "client added " + most + " threads at most");
        List<String> shown = new ArrayList<>(new java.util.TreeSet<>(extra)).subList(0, Math.min(20, extra.size()));
        assertTrue(most <= L10_MAX_THREADS, Rule.L11.failure(total + " pending acquireAsync calls through one client added "
                + most + " threads (at most " + L10_MAX_THREADS + " allowed), among them " + shown));

        List<List<Integer>> expected = new ArrayList<>();
        for (int l = 0; l < locks; l++) {
            List<Integer> kept = new ArrayList<>();
            List<CompletableFuture<Optional<Lease>>> fs = futures.get(l);
            for (int i = 0; i < fs.size(); i++) {
                if (i % 2 == 1 || (i == 0 && l % 2 == 0)) {
                    assertTrue(fs.get(i).cancel(true), Rule.L11.failure("waiter " + i + " of a lock held by another "
                            + "client completed before the lock was freed: " + fs.get(i)));
                } else {
                    kept.add(i);
                }
            }
            expected.add(kept);
        }
        long t0 = System.nanoTime();
        held.forEach(Lease::release);
        long end = System.nanoTime() + Duration.ofSeconds(60).plus(lease().multipliedBy(4)).toNanos();
        for (int l = 0; l < locks; l++) {
            for (int i : expected.get(l)) {
                try {
                    served.get(l).get(i).get(Math.max(1, end - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (TimeoutException e) {
                    fail(Rule.L11.failure("after the locks were freed, waiter " + i + " of lock " + l + " was not "
                            + "served within " + millis(end - t0) + " ms (served on that lock: " + order.get(l) + ")"));
                }
            }
        }
        System.out.println("[dlock-tck] L11: half of them cancelled; the rest served in " + millis(System.nanoTime() - t0)
                + " ms after the release");
        assertEquals(0, empty.get(), Rule.L11.failure(empty + " waiters ended without a lease"));
        for (int l = 0; l < locks; l++) {
            assertEquals(expected.get(l), order.get(l), Rule.L11.failure("the waiters of lock " + l + " of one client "
                    + "were not served in the order they asked"));
        }
        // nothing left held or queued by the cancelled waiters: the locks are free for another client
        for (String n : names) {
            Optional<Lease> again = holding.lock(n).tryAcquire(lease());
            assertTrue(again.isPresent(), Rule.L11.failure("after every waiter was served or cancelled, lock '" + n
                    + "' could not be acquired within " + lease() + " (a cancelled waiter left it held or queued)"));
            again.get().release();
        }
    }

    /**
     * L9: close() of a client that holds a thousand leases returns within about two operation
     * timeouts when its backend does not answer: releases go out together under one deadline, and
     * what is not released by then ends by expiry on the server.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void L9_closeIsBounded() throws Exception {
        FreezableClient frozen = freezable("L9");
        LockClient c = frozen.client();
        String p = name(Rule.L9);
        int count = 1000;
        // leases long enough to stay valid through the whole close, so that close() has all of them to release
        // (a backend whose leases are bounded by its session refuses ten lease times: it gets the TCK's lease)
        LockOptions options = longLease(c, 10);
        for (int i = 0; i < count; i++) {
            c.lock(p + "-" + i, options).tryAcquire(lease()).orElseThrow(() -> new AssertionError("a free lock was not granted"));
        }
        frozen.freeze();
        // generous: one operation timeout for the releases, one for closing connections, and a second for scheduling
        Duration bound = opTimeout().multipliedBy(2).plus(Duration.ofSeconds(1));
        long t0 = System.nanoTime();
        Thread closer = new Thread(c::close, "dlock-tck-L9-close");
        closer.setDaemon(true);
        closer.start();
        closer.join(bound.toMillis() + 60_000);
        long took = System.nanoTime() - t0;
        frozen.unfreeze();
        System.out.println("[dlock-tck] L9: close() with " + count + " leases on a frozen network took " + millis(took) + " ms");
        assertTrue(took <= bound.toNanos(), Rule.L9.failure("close() of a client holding " + count + " leases on a frozen "
                + "network took " + millis(took) + " ms; the bound is " + bound.toMillis() + " ms"));
    }

    // ------------------------------------------------------------------ input

    /** V1: invalid names, lease times and waits are rejected with messages that name the parameter. */
    @Test
    public void V1_badInputRejectedClearly() {
        LockClient c = client();
        assertRejected("name", () -> c.lock(null));
        assertRejected("name", () -> c.lock(""));
        assertRejected("name", () -> c.lock("x".repeat(513)));
        assertRejected("name", () -> c.lock("a\u0000b"));
        assertRejected("name", () -> c.lock("a\nb"));
        assertRejected("name", () -> c.lock("\uD800"));
        assertRejected("options", () -> c.lock("ok", null));
        assertRejected("leaseTime", () -> LockOptions.builder().leaseTime(Duration.ZERO));
        assertRejected("leaseTime", () -> LockOptions.builder().leaseTime(Duration.ofMillis(-1)));
        assertRejected("leaseTime", () -> LockOptions.builder().leaseTime(null));
        assertRejected("renewInterval", () -> LockOptions.builder().leaseTime(Duration.ofSeconds(3))
                .renewInterval(Duration.ofSeconds(2)).build());
        assertRejected("leaseTime", () -> c.lock("ok", LockOptions.builder().leaseTime(Duration.ofNanos(1)).build()));
        assertRejected("leaseTime", () -> c.lock("ok", LockOptions.builder().leaseTime(Duration.ofDays(400)).build()));
        DistributedLock lock = c.lock(name(Rule.V1));
        assertRejected("maxWait", () -> lock.tryAcquire(Duration.ofMillis(-1)));
        assertRejected("maxWait", () -> lock.tryAcquire(null));
        assertRejected("maxWait", () -> lock.acquireAsync(Duration.ofMillis(-1)));
        assertRejected("action", () -> lock.withLock(Duration.ZERO, null));
        assertRejected("uri", () -> LockClientConfig.builder(null));
        assertRejected("uri", () -> LockClientConfig.builder(" "));
        assertRejected("uri", () -> LockClient.open("no scheme here"));
        assertRejected("operationTimeout", () -> LockClientConfig.builder("x://y").operationTimeout(Duration.ZERO));
        if (!c.capabilities().contains(Capability.HOLDER_QUERY)) {
            assertThrows(UnsupportedOperationException.class, () -> c.holder("ok"), Rule.V1.failure(
                    "holder() of a backend without HOLDER_QUERY must throw UnsupportedOperationException"));
        }
    }

    private static void assertRejected(String parameter, ThrowingRunnable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call::run,
                Rule.V1.failure("bad " + parameter + " was not rejected with IllegalArgumentException"));
        assertTrue(e.getMessage() != null && e.getMessage().contains(parameter),
                Rule.V1.failure("the message does not name '" + parameter + "': " + e.getMessage()));
    }

    /**
     * V2: a released lease is inert, and releasing again is harmless.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void V2_releasedLeasesAreInert() throws Exception {
        String name = name(Rule.V2);
        LockClient a = client();
        LockClient b = client();
        // a lease ten times the TCK's: only the release can free it within the waits below
        Lease lease = a.lock(name, longLease(a, 10)).tryAcquire(lease()).orElseThrow();
        long token = lease.fencingToken();
        AtomicInteger lostCalls = new AtomicInteger();
        lease.onLost(e -> lostCalls.incrementAndGet());
        lease.release();
        lease.release();
        lease.close();
        assertFalse(lease.isValid(), Rule.V2.failure("a released lease is still valid"));
        assertEquals(Duration.ZERO, lease.remaining(), Rule.V2.failure("a released lease has time left"));
        assertThrows(IllegalStateException.class, lease::ensureValid, Rule.V2.failure("ensureValid() on a released lease must "
                + "throw IllegalStateException"));
        assertEquals(token, lease.fencingToken(), "the token stays readable");
        Lease next = b.lock(name).tryAcquire(lease()).orElseThrow(() -> new AssertionError(Rule.V2.failure("a released lock could not be taken")));
        lease.release(); // a release after someone else took the lock must not touch their lease
        assertTrue(a.lock(name).tryAcquire().isEmpty(), Rule.V2.failure("a repeated release freed another client's lock"));
        sleep(lease().multipliedBy(3).dividedBy(2));
        assertEquals(0, lostCalls.get(), Rule.V2.failure("onLost fired for a lease that was released"));
        assertTrue(next.isValid(), "the other client's lease is untouched");
        next.release();

        // withLock releases after the action, also when the action throws
        String w = name(Rule.V2);
        IllegalStateException boom = new IllegalStateException("the action failed");
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> a.lock(w, longLease(a, 10))
                .withLock(lease(), l -> {
                    throw boom;
                }), Rule.V2.failure("withLock must rethrow what the action threw"));
        assertEquals(boom, thrown, Rule.V2.failure("withLock must rethrow the action's own exception"));
        Optional<Lease> after = b.lock(w).tryAcquire(lease());
        assertTrue(after.isPresent(), Rule.V2.failure("withLock did not release the lock when its action threw"));
        after.get().release();
    }

    /**
     * V3: an unreachable or stalled backend gives LockBackendException within the operation timeout,
     * and says that a retry may succeed ({@link LockBackendException#retryable()}).
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void V3_unreachableBackendFailsInTime() throws Exception {
        // generous: connect and read phases may each take up to the timeout on some clients; never a hang
        long bound = failureBound().toNanos();
        boolean ran = false;
        Optional<String> unreachable = fixture().unreachableUri();
        if (unreachable.isPresent()) {
            ran = true;
            long t0 = System.nanoTime();
            LockBackendException failure = failureThrough(unreachable.get(), Rule.V3,
                    "an acquire on an unreachable backend did not fail with LockBackendException");
            long took = System.nanoTime() - t0;
            assertTrue(took < bound, Rule.V3.failure("failing against an unreachable backend took " + millis(took) + " ms"));
            assertTrue(failure.retryable(), Rule.V3.failure("an unreachable backend's exception says no retry can help ("
                    + failure + "); a server that does not answer may come back: only a configuration failure is not "
                    + "retryable"));
            System.out.println("[dlock-tck] V3: unreachable backend failed in " + millis(took) + " ms");
        }
        Optional<FreezableClient> frozen = fixture().openFreezable(config());
        if (frozen.isPresent()) {
            ran = true;
            opened.add(frozen.get());
            LockClient c = frozen.get().client();
            c.lock(name(Rule.V3)).tryAcquire(lease()).orElseThrow().release(); // the connection is up
            frozen.get().freeze();
            long t0 = System.nanoTime();
            LockBackendException failure = assertThrows(LockBackendException.class,
                    () -> c.lock(name(Rule.V3)).tryAcquire(Duration.ofSeconds(10)),
                    Rule.V3.failure("an acquire over a frozen network did not fail with LockBackendException"));
            long took = System.nanoTime() - t0;
            assertTrue(took < bound, Rule.V3.failure("failing over a frozen network took " + millis(took) + " ms"));
            assertTrue(failure.retryable(), Rule.V3.failure("a stalled backend's exception says no retry can help ("
                    + failure + "); only a configuration failure is not retryable"));
            System.out.println("[dlock-tck] V3: stalled backend failed in " + millis(took) + " ms");
            frozen.get().unfreeze();
        }
        assumeTrue(ran, "V3 needs TckFixture.unreachableUri() or openFreezable(); the fixture offers neither");
    }

    /**
     * V4: a configuration failure (a password the server rejects, a permission it denies, a missing
     * table, a TLS mismatch) is reported as a {@link LockConfigurationException} of its kind, within
     * the operation timeout, from opening the client or from its first acquire.
     *
     * @throws Exception if the rule is violated, the backend fails otherwise, or the test is interrupted
     */
    @Test
    public void V4_configurationFailureReportedAsItsKind() throws Exception {
        Map<LockConfigurationException.Kind, String> uris = fixture().misconfiguredUris();
        assumeFalse(uris.isEmpty(), "V4 needs TckFixture.misconfiguredUris() (URIs the backend must refuse for a "
                + "configuration reason); the fixture offers none");
        // generous, as V3: opening and the first call may each take up to the timeout; never a hang
        long bound = failureBound().toNanos();
        for (Map.Entry<LockConfigurationException.Kind, String> e : uris.entrySet()) {
            LockConfigurationException.Kind kind = e.getKey();
            long t0 = System.nanoTime();
            LockBackendException failure = failureThrough(e.getValue(), Rule.V4,
                    "an acquire through a URI with a " + kind + " misconfiguration did not fail with LockBackendException");
            long took = System.nanoTime() - t0;
            assertTrue(failure instanceof LockConfigurationException, Rule.V4.failure("a " + kind + " misconfiguration "
                    + "was reported as a " + (failure.retryable() ? "retryable " : "") + failure.getClass().getSimpleName()
                    + ", not a LockConfigurationException: " + failure.getMessage()));
            assertEquals(kind, ((LockConfigurationException) failure).kind(), Rule.V4.failure("a " + kind
                    + " misconfiguration was reported as " + ((LockConfigurationException) failure).kind() + ": "
                    + failure.getMessage()));
            assertFalse(failure.retryable(), Rule.V4.failure("a configuration failure says a retry may help"));
            assertTrue(took < bound, Rule.V4.failure("reporting the " + kind + " misconfiguration took " + millis(took)
                    + " ms"));
            System.out.println("[dlock-tck] V4: " + kind + " reported in " + millis(took) + " ms: " + failure.getMessage());
        }
    }

    /** How long V3 and V4 allow a failure to take: twice the operation timeout and 1.5 s. */
    private Duration failureBound() {
        return opTimeout().multipliedBy(2).plus(Duration.ofMillis(1500));
    }

    /**
     * Opens a client of a URI and makes one acquire with a 10 s wait; a backend may fail either.
     *
     * @return the failure
     */
    private LockBackendException failureThrough(String uri, Rule rule, String ifNone) {
        try {
            LockClient c = client(b -> b.uri(uri));
            return assertThrows(LockBackendException.class, () -> c.lock(name(rule)).tryAcquire(Duration.ofSeconds(10)),
                    rule.failure(ifNone));
        } catch (LockBackendException e) {
            return e; // opening eagerly and failing is fine too
        }
    }
}
