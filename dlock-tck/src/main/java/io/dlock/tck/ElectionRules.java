package io.dlock.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.Capability;
import io.dlock.ElectionListener;
import io.dlock.ElectionOptions;
import io.dlock.LeaderElection;
import io.dlock.LockClient;
import io.dlock.LockHolder;
import io.dlock.RevokeReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The leader-election rules (E1-E4), run on {@link LeaderElection} over the provider's clients.
 * Part of the {@link LockProviderTck} chain: provider authors never subclass it directly.
 *
 * <p>Candidates record every {@code onElected}/{@code onRevoked} call with a timestamp of this JVM's
 * monotonic clock, so that the order of events across candidates can be checked: a leadership
 * counts from its {@code onElected} to its {@code onRevoked}, and two such intervals must never
 * overlap.
 */
public abstract class ElectionRules extends TckSupport {

    /** For subclasses. */
    protected ElectionRules() { }

    // ------------------------------------------------------------------ helpers

    /** One listener call, as a candidate saw it. */
    protected record ElectionEvent(String who, boolean elected, long term, RevokeReason reason, long at) { }

    /** A started or unstarted candidate with a listener that records its calls. */
    protected static final class Candidate implements AutoCloseable {
        private final String who;
        private final LeaderElection election;
        private final List<ElectionEvent> events;
        private volatile long lastTerm;

        private Candidate(String who, LockClient client, String name, ElectionOptions options, List<ElectionEvent> events) {
            this.who = who;
            this.events = events;
            this.election = LeaderElection.create(client, name, options, new ElectionListener() {
                @Override
                public void onElected(long term) {
                    lastTerm = term;
                    events.add(new ElectionEvent(who, true, term, null, System.nanoTime()));
                }

                @Override
                public void onRevoked(RevokeReason reason) {
                    events.add(new ElectionEvent(who, false, lastTerm, reason, System.nanoTime()));
                }
            });
        }

        /** @return the candidate's label */
        public String who() {
            return who;
        }

        /** @return the election */
        public LeaderElection election() {
            return election;
        }

        /** @return this candidate's events so far */
        public List<ElectionEvent> events() {
            List<ElectionEvent> mine = new ArrayList<>();
            for (ElectionEvent e : events) {
                if (e.who().equals(who)) {
                    mine.add(e);
                }
            }
            return mine;
        }

        /**
         * Finds this candidate's last election to a term above a given one.
         *
         * @param after the term to exceed
         * @return the last {@code onElected} with a higher term, if any
         */
        public Optional<ElectionEvent> electedAfter(long after) {
            return events().stream().filter(e -> e.elected() && e.term() > after).reduce((a, b) -> b);
        }

        /** @return this candidate's last {@code onRevoked}, if any */
        public Optional<ElectionEvent> lastRevoked() {
            return events().stream().filter(e -> !e.elected()).reduce((a, b) -> b);
        }

        @Override
        public void close() {
            election.close();
        }
    }

    /**
     * The options of the TCK's candidates.
     *
     * @return the TCK's lease, a resign pause of half a lease, a retry delay of 100 ms
     */
    protected final ElectionOptions electionOptions() {
        return ElectionOptions.builder().lockOptions(options()).resignPause(lease().dividedBy(2))
                .retryDelay(Duration.ofMillis(100)).build();
    }

    /**
     * Creates a candidate (not started) that the TCK closes after the test, before its client.
     *
     * @param who the candidate's label in events and messages
     * @param client the client it contends through
     * @param name the election's name
     * @param events where its listener records its calls (shared by the candidates of one rule)
     * @return the candidate
     */
    protected final Candidate candidate(String who, LockClient client, String name, List<ElectionEvent> events) {
        Candidate c = new Candidate(who, client, name, electionOptions(), events);
        opened.add(c);
        return c;
    }

    /**
     * Waits until the candidate leads; fails the rule if it does not within the timeout.
     *
     * @param rule the rule being checked, for the failure message
     * @param c the candidate
     * @param timeout the longest wait
     * @return the candidate's term
     */
    protected static long awaitLeader(Rule rule, Candidate c, Duration timeout) {
        assertTrue(await(() -> c.election().isLeader(), timeout),
                rule.failure(c.who() + " did not become leader within " + timeout));
        return c.election().term().orElse(0);
    }

    /**
     * Checks a run's events: per candidate, elected and revoked alternate; leaderships (from
     * {@code onElected} to {@code onRevoked}) never overlap; with fencing, terms strictly increase.
     * Call after the candidates are closed, so that every leadership has ended.
     *
     * @param rule the rule being checked, for failure messages
     * @param events every candidate's recorded calls
     * @param fencing whether the backend declares {@link Capability#FENCING} (terms must increase)
     */
    protected final void checkLeaderships(Rule rule, List<ElectionEvent> events, boolean fencing) {
        Map<String, ElectionEvent> open = new HashMap<>();
        List<long[]> terms = new ArrayList<>(); // {term, electedAt, revokedAt}
        List<ElectionEvent> sorted = new ArrayList<>(events);
        sorted.sort(Comparator.comparingLong(ElectionEvent::at));
        for (ElectionEvent e : sorted) {
            ElectionEvent previous = open.get(e.who());
            if (e.elected()) {
                assertTrue(previous == null, rule.failure(e.who() + " was elected (term " + e.term()
                        + ") while still leading term " + (previous == null ? 0 : previous.term())));
                open.put(e.who(), e);
            } else {
                assertTrue(previous != null, rule.failure(e.who() + " got onRevoked(" + e.reason() + ") without a leadership"));
                terms.add(new long[] {previous.term(), previous.at(), e.at()});
                open.remove(e.who());
            }
        }
        assertTrue(open.isEmpty(), rule.failure("leaderships never revoked, though their candidates were closed: " + open));
        terms.sort(Comparator.comparingLong(t -> t[1]));
        for (int i = 1; i < terms.size(); i++) {
            long[] a = terms.get(i - 1);
            long[] b = terms.get(i);
            assertTrue(b[1] - a[2] >= 0, rule.failure("term " + b[0] + " was elected " + millis(a[2] - b[1])
                    + " ms before term " + a[0] + " was revoked: two leaders at once"));
            if (fencing) {
                assertTrue(b[0] > a[0], rule.failure("term " + b[0] + " came after term " + a[0]
                        + ": terms must strictly increase"));
            }
        }
    }

    private boolean fencing(LockClient c) {
        return c.capabilities().contains(Capability.FENCING);
    }

    // ------------------------------------------------------------------ rules

    /**
     * E1: three candidates on three clients take turns (each leader resigns after a quarter lease).
     * Leaderships never overlap, neither as the listeners saw them nor as {@code term()} showed them
     * to a sampler, and terms strictly increase.
     *
     * @throws Exception if the rule fails to run
     */
    @Test
    public void E1_atMostOneLeaderAndTermsIncrease() throws Exception {
        String name = name(Rule.E1);
        List<ElectionEvent> events = new CopyOnWriteArrayList<>();
        List<Candidate> candidates = new ArrayList<>();
        LockClient first = client();
        for (int i = 0; i < 3; i++) {
            candidates.add(candidate("candidate-" + i, i == 0 ? first : client(), name, events));
        }
        boolean fencing = fencing(first);
        // proven leaderships seen by polling term(): {term, index, firstSeenEnd, lastSeenStart}
        Map<Long, long[]> seen = new HashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        Worker sampler = new Worker("E1-sampler", () -> {
            while (!stop.get()) {
                for (int i = 0; i < candidates.size(); i++) {
                    long s = System.nanoTime();
                    OptionalLong term = candidates.get(i).election().term();
                    long e = System.nanoTime();
                    if (term.isPresent()) {
                        int index = i;
                        seen.compute(term.getAsLong(), (k, v) -> {
                            if (v == null) {
                                return new long[] {k, index, e, s};
                            }
                            assertEquals(v[1], index, Rule.E1.failure("term " + k + " was held by two candidates"));
                            v[3] = s;
                            return v;
                        });
                    }
                }
                Thread.sleep(1);
            }
        });
        sampler.start();
        candidates.forEach(c -> c.election().start());

        int wanted = 6;
        int leaderships = 0;
        // generous: each turn takes a quarter lease plus a hand-over; 20 lease times leave room for a slow machine
        Duration budget = lease().multipliedBy(20).plus(opTimeout().multipliedBy(4));
        long deadline = System.nanoTime() + budget.toNanos();
        while (leaderships < wanted && System.nanoTime() - deadline < 0) {
            Optional<Candidate> leader = candidates.stream().filter(c -> c.election().isLeader()).findFirst();
            if (leader.isEmpty()) {
                sleep(Duration.ofMillis(5));
                continue;
            }
            sleep(lease().dividedBy(4));
            if (leader.get().election().resign()) {
                leaderships++;
            }
        }
        stop.set(true);
        sampler.finish(Duration.ofSeconds(10));
        candidates.forEach(Candidate::close);
        assertTrue(leaderships >= wanted, Rule.E1.failure("only " + leaderships + " of " + wanted
                + " leaderships were handed over within " + budget));

        checkLeaderships(Rule.E1, events, fencing);
        List<long[]> proven = new ArrayList<>();
        for (long[] v : seen.values()) {
            if (v[3] - v[2] > 0) {
                proven.add(v);
            }
        }
        proven.sort(Comparator.comparingLong(v -> v[2]));
        for (int i = 1; i < proven.size(); i++) {
            long[] a = proven.get(i - 1);
            long[] b = proven.get(i);
            assertTrue(b[2] - a[3] >= 0, Rule.E1.failure("candidate-" + a[1] + " (term " + a[0] + ") and candidate-"
                    + b[1] + " (term " + b[0] + ") both showed a valid term at once"));
        }
        for (long term : seen.keySet()) {
            assertTrue(events.stream().anyMatch(e -> e.elected() && e.term() == term),
                    Rule.E1.failure("term() showed term " + term + ", which no onElected reported"));
        }
        System.out.println("[dlock-tck] E1: " + events.stream().filter(ElectionEvent::elected).count()
                + " leaderships, terms " + events.stream().filter(ElectionEvent::elected).map(ElectionEvent::term).toList());
    }

    /**
     * E2: the leader's client crashes (connections cut, reconnections stall). It must be told it lost
     * the leadership, and another candidate must be elected once the lease ran out on the server,
     * with a higher term, never before the crashed leader was told. When the crashed client comes
     * back, it must not lead alongside the new leader.
     *
     * @throws Exception if the rule fails to run
     */
    @Test
    public void E2_leaderCrashGivesNewLeaderAfterTheLease() throws Exception {
        String name = name(Rule.E2);
        FreezableClient crashing = freezable("E2");
        LockClient other = client();
        List<ElectionEvent> events = new CopyOnWriteArrayList<>();
        Candidate a = candidate("crashed", crashing.client(), name, events);
        Candidate b = candidate("successor", other, name, events);
        a.election().start();
        long termA = awaitLeader(Rule.E2, a, lease().multipliedBy(2).plus(opTimeout()));
        b.election().start();
        sleep(lease()); // b is now waiting on the server, and a has renewed at least once
        assertFalse(b.election().isLeader(), Rule.E2.failure("a second candidate was elected while the leader renewed"));

        long crashedAt = System.nanoTime();
        crashing.crash();
        // as L2: the lease runs out on the server within a lease time of the last renewal; 4 lease times plus an
        // operation timeout leave room for slow sessions and a loaded machine
        Duration bound = lease().multipliedBy(4).plus(opTimeout());
        boolean elected = await(() -> b.election().isLeader(), bound);
        long electedAt = System.nanoTime();
        assertTrue(elected, Rule.E2.failure("no new leader within " + bound + " of the leader's crash"));
        long termB = b.election().term().orElse(0);
        Optional<ElectionEvent> revokedA = a.lastRevoked();
        Optional<ElectionEvent> electedB = b.electedAfter(0);
        assertTrue(revokedA.isPresent(), Rule.E2.failure("the crashed leader was not told (onRevoked) by the time "
                + "another candidate was elected"));
        assertEquals(RevokeReason.LOST, revokedA.get().reason(), Rule.E2.failure("the crashed leader was revoked with "
                + revokedA.get().reason() + ", not LOST"));
        assertTrue(electedB.isPresent(), Rule.E2.failure("the new leader's onElected was not called"));
        assertTrue(electedB.get().at() - revokedA.get().at() >= 0, Rule.E2.failure("the new leader was elected "
                + millis(revokedA.get().at() - electedB.get().at()) + " ms before the crashed leader was told"));
        assertFalse(a.election().isLeader(), Rule.E2.failure("the crashed leader still believed it led"));
        if (fencing(other)) {
            assertTrue(termB > termA, Rule.E2.failure("the new term " + termB + " is not above the crashed leader's " + termA));
        }
        System.out.println("[dlock-tck] E2: crashed leader told " + millis(revokedA.get().at() - crashedAt)
                + " ms after the crash, new leader (term " + termB + ") elected " + millis(electedAt - crashedAt) + " ms after it");

        // the crashed client comes back: it contends again, but the new leader keeps the leadership
        crashing.unfreeze();
        sleep(lease());
        assertEquals(OptionalLong.of(termB), b.election().term(), Rule.E2.failure("the new leader lost the leadership "
                + "(term " + termB + ") when the crashed client came back"));
        assertFalse(a.election().isLeader(), Rule.E2.failure("the crashed client led again next to the new leader"));
        a.close();
        b.close();
        checkLeaderships(Rule.E2, events, fencing(other));
    }

    /**
     * E3: the leader resigns while another candidate waits: {@code onRevoked(RESIGNED)} comes first,
     * {@code isLeader()} is false at once, and the waiting candidate is elected within 2 s; when that
     * one resigns in turn, the first (which contends again after its pause) takes over.
     *
     * @throws Exception if the rule fails to run
     */
    @Test
    public void E3_resignHandsOverPromptly() throws Exception {
        String name = name(Rule.E3);
        List<ElectionEvent> events = new CopyOnWriteArrayList<>();
        LockClient ca = client();
        Candidate a = candidate("first", ca, name, events);
        Candidate b = candidate("second", client(), name, events);
        a.election().start();
        long termA = awaitLeader(Rule.E3, a, lease().multipliedBy(2).plus(opTimeout()));
        b.election().start();
        sleep(lease()); // b waits on the server; a renews
        Duration left = a.election().remaining();
        assertTrue(left.compareTo(Duration.ZERO) > 0 && left.compareTo(lease()) <= 0, Rule.E3.failure(
                "remaining() of a renewing leader must be positive and at most the lease time, was " + left));
        assertEquals(Duration.ZERO, b.election().remaining(), Rule.E3.failure("remaining() of a waiting candidate must be zero"));

        long resignedAt = System.nanoTime();
        assertTrue(a.election().resign(), Rule.E3.failure("resign() of the leader returned false"));
        assertFalse(a.election().isLeader(), Rule.E3.failure("isLeader() was still true after resign() returned"));
        assertTrue(a.election().term().isEmpty(), Rule.E3.failure("term() was still present after resign() returned"));
        assertEquals(Duration.ZERO, a.election().remaining(), Rule.E3.failure("remaining() was not zero after resign() returned"));
        assertFalse(a.election().resign(), Rule.E3.failure("a second resign() reported another leadership"));
        // generous, as L1: a notifying backend hands over in milliseconds, a polling one within the TCK's retry cap
        // (250 ms) plus a round trip; 2 s leaves room for a loaded machine
        boolean handedOver = await(() -> b.election().isLeader(), Duration.ofSeconds(2));
        long handOff = System.nanoTime() - resignedAt;
        assertTrue(handedOver, Rule.E3.failure("the waiting candidate was not elected within 2 s of the leader's resign()"));
        long termB = b.election().term().orElse(0);
        ElectionEvent revokedA = a.lastRevoked().orElseThrow(() -> new AssertionError(Rule.E3.failure(
                "resign() did not call onRevoked")));
        assertEquals(RevokeReason.RESIGNED, revokedA.reason(), Rule.E3.failure("resign() revoked with " + revokedA.reason()));
        assertTrue(revokedA.at() - resignedAt >= 0, "onRevoked ran inside resign()");
        System.out.println("[dlock-tck] E3: hand-over " + millis(handOff) + " ms after resign()");

        // the first candidate contends again after its pause, and takes over when the second resigns
        sleep(electionOptions().resignPause().plus(Duration.ofMillis(100)));
        assertTrue(b.election().resign(), Rule.E3.failure("resign() of the second leader returned false"));
        boolean back = await(() -> a.election().isLeader(), Duration.ofSeconds(2));
        assertTrue(back, Rule.E3.failure("a candidate that resigned did not contend again: it was not elected within 2 s "
                + "of the next leader's resign()"));
        long termA2 = a.election().term().orElse(0);
        a.close();
        b.close();
        if (fencing(ca)) {
            assertTrue(termA < termB && termB < termA2, Rule.E3.failure("terms did not increase over the hand-overs: "
                    + termA + ", " + termB + ", " + termA2));
        }
        checkLeaderships(Rule.E3, events, fencing(ca));
    }

    /**
     * E4: a process that does not take part (an unstarted election on its own client) sees the
     * current leader through {@code leader()}: nobody before the first election, the leader's term
     * after it, the new term after a hand-over, and nobody again once every candidate is closed.
     * Skipped without {@link Capability#HOLDER_QUERY}.
     *
     * @throws Exception if the rule fails to run
     */
    @Test
    public void E4_observersSeeTheCurrentLeader() throws Exception {
        String name = name(Rule.E4);
        LockClient oc = client();
        assumeTrue(oc.capabilities().contains(Capability.HOLDER_QUERY),
                "E4 needs Capability.HOLDER_QUERY, which " + fixture().name() + " does not declare");
        List<ElectionEvent> events = new CopyOnWriteArrayList<>();
        Candidate observer = candidate("observer", oc, name, events);
        Candidate a = candidate("first", client(), name, events);
        Candidate b = candidate("second", client(), name, events);
        assertTrue(observer.election().leader().isEmpty(), Rule.E4.failure("a leader was reported before any candidate started"));

        a.election().start();
        long termA = awaitLeader(Rule.E4, a, lease().multipliedBy(2).plus(opTimeout()));
        assertObserved(observer, termA, "the first leader");
        assertEquals(OptionalLong.of(termA), a.election().leader().map(h -> OptionalLong.of(h.fencingToken()))
                .orElse(OptionalLong.empty()), Rule.E4.failure("the leader's own leader() did not show its term"));

        b.election().start();
        sleep(lease().dividedBy(2));
        assertTrue(a.election().resign(), Rule.E4.failure("resign() of the leader returned false"));
        long termB = awaitLeader(Rule.E4, b, Duration.ofSeconds(2));
        assertObserved(observer, termB, "the leader after a hand-over");

        a.close();
        b.close();
        // released on close: the observer sees nobody well within a lease time (a polling backend needs no wait here)
        boolean nobody = await(() -> observer.election().leader().isEmpty(), lease());
        assertTrue(nobody, Rule.E4.failure("a leader was still reported after every candidate closed: "
                + observer.election().leader()));
        assertFalse(observer.election().isLeader(), Rule.E4.failure("an unstarted election claimed to lead"));
        System.out.println("[dlock-tck] E4: observer saw term " + termA + ", then " + termB + ", then nobody");
    }

    /** Waits (up to 2 s, for backends whose reads may lag the grant) until the observer sees the term. */
    private static void assertObserved(Candidate observer, long term, String what) {
        AtomicReference<Optional<LockHolder>> last = new AtomicReference<>(Optional.empty());
        boolean ok = await(() -> {
            Optional<LockHolder> h = observer.election().leader();
            last.set(h);
            return h.isPresent() && h.get().fencingToken() == term;
        }, Duration.ofSeconds(2));
        if (!ok) {
            fail(Rule.E4.failure("the observer saw " + last.get() + " instead of " + what + " (term " + term + ")"));
        }
    }
}
