package io.dlock.tck;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A history of operations for the fault tier's checker: every operation is recorded when it is
 * invoked and again when it completes as ok, fail or unknown, with monotonic timestamps from one
 * JVM. An operation whose outcome is unknown (a timeout, a crash) is never counted as a failure of
 * the system under test: the checker only convicts on what was proven. Thread-safe.
 */
final class History {

    /** How an operation ended. */
    public enum Outcome {
        /** The operation was invoked; its completion follows. */
        INVOKED,
        /** It succeeded. */
        OK,
        /** It certainly did not take effect. */
        FAIL,
        /** It may or may not have taken effect (a timeout, a crash). */
        UNKNOWN
    }

    /** One event. {@code token} and {@code value} are 0 where they do not apply. */
    public record Event(long id, String process, String op, Outcome outcome, long token, long value, long at) { }

    private final List<Event> events = new ArrayList<>();
    private long nextId;

    /**
     * Records the invocation of an operation.
     *
     * @param process who invokes it (a client and thread)
     * @param op what: {@code acquire}, {@code release}, {@code read}, {@code write}
     * @return the operation id, for its completion
     */
    public synchronized long invoke(String process, String op) {
        long id = nextId++;
        events.add(new Event(id, process, op, Outcome.INVOKED, 0, 0, System.nanoTime()));
        return id;
    }

    /**
     * Records the completion of an operation.
     *
     * @param id what {@link #invoke} returned
     * @param outcome how it ended
     * @param token the fencing token involved, or 0
     * @param value the value read or written, or 0
     */
    public synchronized void complete(long id, Outcome outcome, long token, long value) {
        Event invoked = null;
        for (int i = events.size() - 1; i >= 0; i--) {
            if (events.get(i).id() == id) {
                invoked = events.get(i);
                break;
            }
        }
        if (invoked == null || outcome == Outcome.INVOKED) {
            throw new IllegalArgumentException("id: no invocation " + id + " to complete with " + outcome);
        }
        events.add(new Event(id, invoked.process(), invoked.op(), outcome, token, value, System.nanoTime()));
    }

    /** @return a copy of the events in the order they were recorded */
    public synchronized List<Event> events() {
        return new ArrayList<>(events);
    }

    /** What the checker found. */
    public record Verdict(int grants, int staleRejected, int staleAccepted, int lostUpdates, int overlaps,
                          List<String> problems) {
        /** @return whether the history is safe */
        public boolean safe() {
            return staleAccepted == 0 && lostUpdates == 0 && overlaps == 0 && problems.isEmpty();
        }

        @Override
        public String toString() {
            return grants + " grants, " + staleRejected + " stale writes rejected, " + staleAccepted
                    + " stale writes accepted, " + lostUpdates + " lost updates, " + overlaps + " overlaps"
                    + (problems.isEmpty() ? "" : "; first problem: " + problems.get(0));
        }
    }

    /**
     * Checks a history of lock-protected increments of a {@link FencedRegister}, together with the
     * register's own log.
     *
     * <ul>
     *   <li><b>Overlaps</b>: holds are the spans from an {@code acquire} that completed OK to the
     *       invocation of the matching {@code release}, counted only when the process also recorded
     *       a {@code valid} check OK at the end (op {@code held}: the lease was still valid right
     *       before release). Two proven holds of different processes must not overlap.</li>
     *   <li><b>Stale writes</b>: the register accepts an access only with a token at least the
     *       highest seen; an accepted write whose token is below a token already accepted is a
     *       stale write accepted (a broken register or a token that went backwards). Rejected
     *       writes are counted as stale writes rejected: the fence doing its job.</li>
     *   <li><b>Lost updates</b>: every acknowledged write (OK in the history) set the register to
     *       the value read plus one; the final value must be the number of acknowledged writes.
     *       Writes with an unknown outcome may or may not have landed and are allowed either way.</li>
     * </ul>
     *
     * @param history the history
     * @param registerLog the register's log
     * @param finalValue the register's value at the end
     * @return the verdict
     */
    public static Verdict check(List<Event> history, List<FencedRegister.Access> registerLog, long finalValue) {
        return check(history, registerLog, finalValue, List.of());
    }

    /**
     * A span of time around a fault that may let a second holder in legitimately: a restart of a
     * server that lost its locks, for a backend that does not claim to survive one.
     *
     * @param from when the fault began (monotonic nanoseconds)
     * @param to when a hold that started after {@code from} stops being excused: the server back,
     *     plus the longest lease a holder from before the fault could still have
     */
    public record Window(long from, long to) { }

    /**
     * Checks as {@link #check(List, List, long)} does, except that an overlap is excused when the
     * earlier hold began before a window and the later one began inside it: only the holds that
     * straddle such a fault, never the whole run.
     *
     * @param history the history
     * @param registerLog the register's log
     * @param finalValue the register's value at the end
     * @param excused the windows
     * @return the verdict; excused overlaps are not counted
     */
    public static Verdict check(List<Event> history, List<FencedRegister.Access> registerLog, long finalValue,
                                List<Window> excused) {
        List<String> problems = new ArrayList<>();
        // proven holds
        Map<Long, Event> acquired = new HashMap<>();
        Map<String, Event> openHold = new HashMap<>();
        Map<String, Long> provenEnd = new HashMap<>();
        List<long[]> holds = new ArrayList<>(); // start, end, token
        List<String> holders = new ArrayList<>();
        int grants = 0;
        int ackWrites = 0;
        int unknownWrites = 0;
        for (Event e : history) {
            if (e.op().equals("acquire") && e.outcome() == Outcome.OK) {
                grants++;
                openHold.put(e.process(), e);
                acquired.put(e.id(), e);
            } else if (e.op().equals("held") && e.outcome() == Outcome.OK) {
                provenEnd.put(e.process(), e.at());
            } else if (e.op().equals("release") && e.outcome() == Outcome.INVOKED) {
                Event start = openHold.remove(e.process());
                Long end = provenEnd.remove(e.process());
                if (start != null && end != null && end >= start.at()) {
                    holds.add(new long[] {start.at(), end, start.token()});
                    holders.add(e.process());
                }
            } else if (e.op().equals("write") && e.outcome() == Outcome.OK) {
                ackWrites++;
            } else if (e.op().equals("write") && e.outcome() == Outcome.UNKNOWN) {
                unknownWrites++;
            }
        }
        int overlaps = 0;
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < holds.size(); i++) {
            order.add(i);
        }
        order.sort((a, b) -> Long.compare(holds.get(a)[0], holds.get(b)[0]));
        // every hold against every earlier one still running when it began (not only the one that ends last:
        // an excused pair must not hide another overlap behind it)
        List<Integer> active = new ArrayList<>();
        for (int k : order) {
            long[] h = holds.get(k);
            active.removeIf(j -> holds.get(j)[1] <= h[0]);
            for (int j : active) {
                if (!holders.get(k).equals(holders.get(j)) && !excusedPair(holds.get(j)[0], h[0], excused)) {
                    overlaps++;
                    if (problems.size() < 5) {
                        problems.add(holders.get(j) + " (token " + holds.get(j)[2] + ") and " + holders.get(k)
                                + " (token " + h[2] + ") both proved they held the lock at once");
                    }
                    break;
                }
            }
            active.add(k);
        }
        // the register's log
        long highest = Long.MIN_VALUE;
        int staleRejected = 0;
        int staleAccepted = 0;
        for (FencedRegister.Access a : registerLog) {
            if (a.accepted()) {
                if (a.token() < highest) {
                    staleAccepted++;
                    if (problems.size() < 5) {
                        problems.add(a.who() + " accessed with token " + a.token() + " after token " + highest);
                    }
                }
                highest = Math.max(highest, a.token());
            } else if (a.write()) {
                staleRejected++;
            }
        }
        int lost = 0;
        if (finalValue < ackWrites) {
            lost = (int) (ackWrites - finalValue);
            problems.add(ackWrites + " writes were acknowledged but the register holds " + finalValue);
        } else if (finalValue > ackWrites + unknownWrites) {
            problems.add("the register holds " + finalValue + " but only " + (ackWrites + unknownWrites)
                    + " writes were acknowledged or unknown");
        }
        return new Verdict(grants, staleRejected, staleAccepted, lost, overlaps, problems);
    }

    private static boolean excusedPair(long earlierStart, long laterStart, List<Window> excused) {
        for (Window w : excused) {
            if (earlierStart < w.from() && laterStart >= w.from() && laterStart <= w.to()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Returns the first event of an operation id, for messages.
     *
     * @param id the operation id
     * @return the invocation, if recorded
     */
    public synchronized Optional<Event> invocation(long id) {
        return events.stream().filter(e -> e.id() == id && e.outcome() == Outcome.INVOKED).findFirst();
    }
}
