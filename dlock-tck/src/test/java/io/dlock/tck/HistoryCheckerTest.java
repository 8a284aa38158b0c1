package io.dlock.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.tck.History.Event;
import io.dlock.tck.History.Outcome;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The checker against hand-made histories, valid and invalid. */
class HistoryCheckerTest {

    private final List<Event> events = new ArrayList<>();
    private long id;

    private long ev(String process, String op, Outcome outcome, long token, long value, long at) {
        events.add(new Event(id, process, op, outcome, token, value, at));
        return id++;
    }

    /** One lock-protected increment: acquire, read, write, held-check, release. */
    private void cycle(String p, long token, long start, long end, Outcome write) {
        ev(p, "acquire", Outcome.INVOKED, 0, 0, start - 1);
        events.add(new Event(id - 1, p, "acquire", Outcome.OK, token, 0, start));
        ev(p, "write", write, token, 0, start + 1);
        ev(p, "held", Outcome.OK, token, 0, end);
        ev(p, "release", Outcome.INVOKED, token, 0, end + 1);
    }

    private static FencedRegister.Access acc(String who, boolean write, long token, long value, boolean ok) {
        return new FencedRegister.Access(who, write, token, value, ok, 0);
    }

    @Test
    void aCleanHistoryIsSafe() {
        cycle("a", 1, 10, 20, Outcome.OK);
        cycle("b", 2, 30, 40, Outcome.OK);
        List<FencedRegister.Access> log = List.of(acc("a", false, 1, 0, true), acc("a", true, 1, 1, true),
                acc("b", false, 2, 1, true), acc("b", true, 2, 2, true));
        History.Verdict v = History.check(events, log, 2);
        assertTrue(v.safe(), v.toString());
        assertEquals(2, v.grants());
        assertEquals(0, v.overlaps());
    }

    @Test
    void overlappingProvenHoldsAreFound() {
        cycle("a", 1, 10, 30, Outcome.OK);
        cycle("b", 2, 20, 40, Outcome.OK);
        History.Verdict v = History.check(events, List.of(), 2);
        assertEquals(1, v.overlaps(), v.toString());
        assertFalse(v.safe());
    }

    @Test
    void anOverlapHiddenBehindAShortHoldIsFound() {
        cycle("a", 1, 10, 100, Outcome.OK); // long
        cycle("b", 2, 20, 30, Outcome.OK); // inside a
        cycle("c", 3, 50, 60, Outcome.OK); // also inside a, though not overlapping b
        History.Verdict v = History.check(events, List.of(), 3);
        assertEquals(2, v.overlaps(), v.toString());
    }

    @Test
    void holdsWithoutAProofOfValidityAtTheEndAreNotCounted() {
        ev("a", "acquire", Outcome.INVOKED, 0, 0, 9);
        events.add(new Event(id - 1, "a", "acquire", Outcome.OK, 1, 0, 10));
        ev("a", "release", Outcome.INVOKED, 1, 0, 50); // no "held": the lease was lost inside
        cycle("b", 2, 20, 30, Outcome.OK);
        History.Verdict v = History.check(events, List.of(), 1);
        assertEquals(0, v.overlaps(), v.toString());
    }

    @Test
    void aStaleAcceptedAccessIsCaughtAndARejectedOneIsCounted() {
        List<FencedRegister.Access> log = List.of(acc("b", true, 5, 1, true), acc("a", true, 4, 1, true),
                acc("c", true, 3, 1, false));
        History.Verdict v = History.check(List.of(), log, 1);
        assertEquals(1, v.staleAccepted(), v.toString());
        assertEquals(1, v.staleRejected(), v.toString());
        assertFalse(v.safe());
    }

    @Test
    void aLostAcknowledgedUpdateIsCaught() {
        cycle("a", 1, 10, 20, Outcome.OK);
        cycle("b", 2, 30, 40, Outcome.OK);
        History.Verdict v = History.check(events, List.of(), 1); // two acknowledged increments, value 1
        assertEquals(1, v.lostUpdates(), v.toString());
        assertFalse(v.safe());
    }

    @Test
    void anUnknownWriteMayOrMayNotHaveLanded() {
        cycle("a", 1, 10, 20, Outcome.OK);
        cycle("b", 2, 30, 40, Outcome.UNKNOWN);
        assertTrue(History.check(events, List.of(), 1).safe(), "the unknown write did not land");
        assertTrue(History.check(events, List.of(), 2).safe(), "the unknown write landed");
        History.Verdict tooMuch = History.check(events, List.of(), 3);
        assertFalse(tooMuch.safe(), "a value no write explains: " + tooMuch);
    }

    @Test
    void theRecorderPairsCompletionsWithInvocations() {
        History h = new History();
        long op = h.invoke("a", "write");
        h.complete(op, Outcome.OK, 7, 1);
        List<Event> recorded = h.events();
        assertEquals(2, recorded.size());
        assertEquals("write", recorded.get(1).op());
        assertEquals("a", recorded.get(1).process());
        assertTrue(recorded.get(1).at() >= recorded.get(0).at());
        assertThrows(IllegalArgumentException.class, () -> h.complete(42, Outcome.OK, 0, 0));
    }

    @Test
    void theRegisterFencesReadsAndWrites() {
        FencedRegister r = new FencedRegister();
        assertEquals(0, r.read("a", 1).orElseThrow());
        assertTrue(r.write("b", 2, 1));
        assertTrue(r.read("a", 1).isEmpty(), "a read with a stale token is refused");
        assertFalse(r.write("a", 1, 5), "a write with a stale token is refused");
        assertEquals(1, r.value());
        assertTrue(r.write("b", 2, 2), "the same token may write again");
    }
}
