package io.dlock.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockBackendException;
import io.dlock.spi.AttemptResult;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class ListeningAttemptTest {

    private static final Duration WAIT = Duration.ofSeconds(1);

    /** A backend's listening as the template sees it: a signal, whether it is in effect, and its stage. */
    static final class Listening {
        final ChangeSignal changes = new ChangeSignal();
        final ChangeSignal confirmations = new ChangeSignal();
        boolean ready;

        void confirm() {
            ready = true;
            confirmations.signal();
        }
    }

    static final class Fake extends ListeningAttempt<Void, Listening> {
        final Listening listening = new Listening();
        final Deque<Supplier<AttemptResult<Void>>> answers = new ArrayDeque<>();
        int listens;
        int unlistens;
        int undos;
        boolean undoNeeded;
        RuntimeException unlistenFailure;

        Fake() {
            super("lock-a");
        }

        @Override
        protected AttemptResult<Void> attempt() {
            Supplier<AttemptResult<Void>> next = answers.poll();
            return next == null ? AttemptResult.busy() : next.get();
        }

        @Override
        protected Listening listen() {
            listens++;
            return listening;
        }

        @Override
        protected ChangeSignal changes(Listening l) {
            return l.changes;
        }

        @Override
        protected boolean ready(Listening l) {
            return l.ready;
        }

        @Override
        protected CompletableFuture<Void> whenReady(Listening l) {
            return l.ready ? CompletableFuture.completedFuture(null) : l.confirmations.changeAfter(l.confirmations.generation());
        }

        @Override
        protected void unlisten(Listening l) {
            unlistens++;
            if (unlistenFailure != null) {
                throw unlistenFailure;
            }
        }

        @Override
        protected void undo() {
            undos++;
        }

        @Override
        protected boolean undoNeeded() {
            return undoNeeded;
        }
    }

    private static CompletableFuture<Void> turn(Fake a) {
        return a.turn(WAIT).toCompletableFuture();
    }

    @Test
    void theFirstTurnListensAndWaitsUntilTheListeningIsInEffect() {
        Fake a = new Fake();
        assertTrue(a.tryOnce() instanceof AttemptResult.Busy);
        assertEquals(0, a.listens, "a try alone does not listen");
        CompletableFuture<Void> first = turn(a);
        assertEquals(1, a.listens);
        assertFalse(first.isDone(), "the first turn waits for the listening to take effect");
        a.listening.changes.signal(); // a notice before the confirmation is not what this turn waits for
        assertFalse(first.isDone());
        a.listening.confirm();
        assertTrue(first.isDone());
        assertEquals("lock-a", a.name());
    }

    @Test
    void aTurnAfterAReadyTryWaitsForAChangeAfterWhatTheTrySaw() {
        Fake a = new Fake();
        a.tryOnce();
        turn(a);
        a.listening.confirm();
        a.tryOnce(); // made with the listening in effect
        a.listening.changes.signal(); // a release told while the try was on its way
        assertTrue(turn(a).isDone(), "the release told during the try must end the next turn at once");

        a.tryOnce();
        CompletableFuture<Void> waiting = turn(a);
        assertFalse(waiting.isDone(), "nothing changed after this try");
        a.listening.changes.signal();
        assertTrue(waiting.isDone());
        assertEquals(1, a.listens, "one listening per attempt");
    }

    @Test
    void aTryMadeBeforeTheListeningTookEffectIsFollowedByAWaitForIt() {
        Fake a = new Fake();
        a.tryOnce();
        turn(a).complete(null); // the core's timer ended the wait before the confirmation
        a.tryOnce(); // not ready: a release now would not be told
        a.listening.changes.signal();
        CompletableFuture<Void> second = turn(a);
        assertFalse(second.isDone(), "must wait for the confirmation, not a change");
        a.listening.confirm();
        assertTrue(second.isDone());
    }

    @Test
    void eachTurnCompletesTheLastOneSoTheSignalDropsIt() {
        Fake a = new Fake();
        a.tryOnce();
        turn(a);
        a.listening.confirm();
        CompletableFuture<Void> previous = null;
        for (int i = 0; i < 1000; i++) {
            a.tryOnce();
            CompletableFuture<Void> t = turn(a);
            if (previous != null) {
                assertTrue(previous.isDone(), "the last turn's stage is completed by the next");
            }
            previous = t;
        }
        assertTrue(a.listening.changes.held() <= 2, "held " + a.listening.changes.held());
    }

    @Test
    void aGrantStopsListeningAndLeavesNothingToUndo() {
        Fake a = new Fake();
        a.tryOnce();
        CompletableFuture<Void> waiting = turn(a);
        a.answers.add(() -> AttemptResult.granted(7, null));
        assertTrue(a.tryOnce() instanceof AttemptResult.Granted);
        assertEquals(1, a.unlistens);
        assertTrue(waiting.isDone(), "the stale turn is completed");
        assertTrue(turn(a).isDone());
        a.abandon();
        assertEquals(1, a.unlistens);
        assertEquals(0, a.undos);
    }

    @Test
    void anUnknownOutcomeIsUndoneOnAbandonOnce() {
        Fake a = new Fake();
        a.tryOnce();
        CompletableFuture<Void> waiting = turn(a);
        LockBackendException failure = new LockBackendException("timed out", "lock-a", null);
        a.answers.add(() -> {
            throw failure;
        });
        assertSame(failure, assertThrows(LockBackendException.class, a::tryOnce));
        a.unlistenFailure = new IllegalStateException("the connection is gone");
        a.abandon(); // never throws
        a.abandon(); // idempotent
        assertEquals(1, a.unlistens);
        assertEquals(1, a.undos, "a grant the server may have made is undone even if unlisten failed");
        assertTrue(waiting.isDone());
        assertTrue(turn(a).isDone(), "after abandon a turn does not wait");
    }

    @Test
    void theBackendMaySayThatAnAbandonMustUndo() {
        Fake a = new Fake();
        a.abandon();
        assertEquals(0, a.undos, "nothing known to undo");
        Fake b = new Fake();
        b.undoNeeded = true;
        b.tryOnce();
        b.abandon();
        assertEquals(1, b.undos);
        assertEquals(0, b.unlistens, "it never listened");
    }

    @Test
    void aTurnWithNoTimeToWaitNeitherListensNorWaits() {
        Fake b = new Fake();
        b.tryOnce();
        assertTrue(b.turn(Duration.ZERO).toCompletableFuture().isDone());
        assertTrue(b.turn(Duration.ofMillis(-1)).toCompletableFuture().isDone());
        assertEquals(0, b.listens);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.turn(null));
        assertTrue(e.getMessage().startsWith("maxWait"), e.getMessage());
    }

    @Test
    void theNameIsRequired() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ListeningAttempt<Void, Object>(null) {
            @Override
            protected AttemptResult<Void> attempt() {
                return AttemptResult.busy();
            }

            @Override
            protected Object listen() {
                return new Object();
            }

            @Override
            protected ChangeSignal changes(Object l) {
                return new ChangeSignal();
            }

            @Override
            protected boolean ready(Object l) {
                return true;
            }

            @Override
            protected CompletableFuture<Void> whenReady(Object l) {
                return CompletableFuture.completedFuture(null);
            }

            @Override
            protected void unlisten(Object l) { }

            @Override
            protected void undo() { }
        });
        assertTrue(e.getMessage().startsWith("name"), e.getMessage());
    }
}
