package io.dlock.spi.support;

import io.dlock.LockBackendException;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AttemptResult;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The acquisition of a backend that is told of releases on a shared channel (pub/sub,
 * {@code LISTEN}): try, and while busy wait for a change after what the try saw.
 *
 * <p>The shape, written once: the first turn that waits starts listening ({@link #listen()}) and
 * waits until the listening is in effect ({@link #whenReady}), since a release told before that
 * would be missed; the try after it, and every later one, first reads the listening's
 * {@link ChangeSignal} generation and whether it {@linkplain #ready is in effect}, and the turn
 * after a try made while ready waits for a change after that generation. So a release told while
 * a try is on its way completes the next turn at once, and nothing is lost between a try and its
 * wait. Every turn's stage is new; the last one is completed when the next try starts or the
 * attempt ends, so the signal drops it. A grant or {@link #abandon()} stops the listening
 * ({@link #unlisten}); {@code abandon()} then has the backend undo what the server may hold for
 * this attempt ({@link #undo()}) if a try's outcome was unknown or {@link #undoNeeded()} says so.
 *
 * <p>What the backend supplies: the try ({@link #attempt()}), and its transport behind
 * {@link #listen()}, {@link #changes}, {@link #ready}, {@link #whenReady} and {@link #unlisten};
 * the backend's listener signals the {@code ChangeSignal} for every notice and for every loss or
 * return of its connection (a change of the connection may have hidden a notice).
 *
 * <p><b>Failure behaviour:</b> a {@link LockBackendException} from {@code attempt()} marks the
 * outcome unknown and is thrown on; from {@code listen()} or {@code whenReady} it fails the
 * acquisition, as {@link AcquireAttempt#turn} allows. {@code abandon()} never throws: what
 * {@code unlisten} throws is logged at debug level and {@code undo()} must not throw. The core
 * bounds every wait by its {@code maxWait}, so a lost notice costs at most one poll interval.
 *
 * <p><b>Concurrency:</b> as {@link AcquireAttempt} says, the core makes one call at a time, each
 * happening-before the next, so this class has no lock; the stages it returns are completed by the
 * backend's listener thread through the {@code ChangeSignal}, which is thread-safe. It starts no
 * thread and holds none while waiting.
 *
 * @param <S> the backend's per-grant state type
 * @param <L> the backend's handle of one listening (a subscription, a registered name)
 */
public abstract class ListeningAttempt<S, L> implements AcquireAttempt<S> {

    private static final Logger LOG = LoggerFactory.getLogger(ListeningAttempt.class);

    private final String name;
    private L listening;
    private boolean readyAtTry;
    private long generationAtTry;
    private boolean outcomeUnknown;
    private boolean finished;
    /** The last turn's stage: stale once the next try starts, completed then so the signal drops it. */
    private CompletableFuture<Void> lastTurn;

    /**
     * Makes an attempt.
     *
     * @param name the lock name, for messages; {@code null} is rejected
     * @throws IllegalArgumentException if {@code name} is {@code null}
     */
    protected ListeningAttempt(String name) {
        this.name = Arguments.notNull("name", name);
    }

    /**
     * The backend's one try, under the rules of {@link AcquireAttempt#tryOnce()}.
     *
     * @return the answer; never {@code null}
     * @throws LockBackendException if the outcome is unknown
     */
    protected abstract AttemptResult<S> attempt();

    /**
     * Starts listening for releases of this attempt's lock, without waiting for it to take
     * effect. Called on the first turn that waits, and again after a grant or abandon never.
     *
     * @return the handle, passed to the other hooks; never {@code null}
     * @throws LockBackendException if the backend cannot listen (the acquisition fails)
     */
    protected abstract L listen();

    /**
     * The signal that the backend's listener raises for every release notice of this lock and
     * every loss or return of its connection.
     *
     * @param listening the handle from {@link #listen()}
     * @return the signal; never {@code null}
     */
    protected abstract ChangeSignal changes(L listening);

    /**
     * Whether the listening is in effect now (the server has confirmed it), so that a release
     * from now on will be told.
     *
     * @param listening the handle from {@link #listen()}
     * @return whether a release would be told now
     */
    protected abstract boolean ready(L listening);

    /**
     * A new stage that completes once the listening may be in effect (or something changed, or
     * the listener closed); complete already if it is in effect. May (re)start the backend's
     * connection; must not wait.
     *
     * @param listening the handle from {@link #listen()}
     * @return the stage; never {@code null}
     * @throws LockBackendException if the backend fails (the acquisition fails)
     */
    protected abstract CompletableFuture<Void> whenReady(L listening);

    /**
     * Stops listening. Called at most once per {@link #listen()}.
     *
     * @param listening the handle from {@link #listen()}
     */
    protected abstract void unlisten(L listening);

    /**
     * Undoes, in the background or within its own budget, what the server may hold for this
     * attempt (a grant made when a try's outcome was unknown, a place in line). Must not throw.
     */
    protected abstract void undo();

    /**
     * Whether {@link #abandon()} must call {@link #undo()} although every try had a known outcome
     * (the backend holds something for a waiting attempt). The default says no.
     *
     * @return whether to undo on abandon
     */
    protected boolean undoNeeded() {
        return false;
    }

    /**
     * The lock name given at construction.
     *
     * @return the name
     */
    protected final String name() {
        return name;
    }

    /**
     * Reads what the listening shows (its generation, then whether it is in effect, so a change
     * between the two only costs a spurious try), then makes the backend's try.
     *
     * @return the backend's answer
     * @throws LockBackendException if the outcome is unknown; {@link #abandon()} then undoes
     */
    @Override
    public final AttemptResult<S> tryOnce() {
        if (listening != null) {
            generationAtTry = changes(listening).generation();
            readyAtTry = ready(listening);
        }
        AttemptResult<S> result;
        try {
            result = attempt();
        } catch (LockBackendException e) {
            outcomeUnknown = true;
            throw e;
        }
        if (result instanceof AttemptResult.Granted) {
            finished = true;
            stopListening();
        }
        return result;
    }

    /**
     * Starts listening on the first call, and returns a stage that completes when the listening is
     * in effect (if the last try was made before it was) or at the first change after the last
     * try's generation. Complete at once after a grant or abandon, or if {@code maxWait} is not
     * positive.
     *
     * @param maxWait the longest the core waits; {@code null} is rejected
     * @return a new stage
     * @throws IllegalArgumentException if {@code maxWait} is {@code null}
     * @throws LockBackendException if {@link #listen()} or {@link #whenReady} fails
     */
    @Override
    public final CompletionStage<Void> turn(Duration maxWait) {
        Arguments.notNull("maxWait", maxWait);
        dropLastTurn();
        if (finished || maxWait.isZero() || maxWait.isNegative()) {
            return CompletableFuture.completedFuture(null);
        }
        if (listening == null) {
            listening = listen();
            readyAtTry = false;
        }
        // listen first; the next try then sees any release made before the listening took effect
        lastTurn = readyAtTry ? changes(listening).changeAfter(generationAtTry) : whenReady(listening);
        return lastTurn;
    }

    /** Stops listening and, if needed, undoes. Idempotent; never throws. */
    @Override
    public final void abandon() {
        if (finished) {
            return;
        }
        finished = true;
        try {
            stopListening();
        } catch (RuntimeException e) {
            LOG.debug("dlock: stopping to listen for lock '{}' failed", name, e);
        }
        if (outcomeUnknown || undoNeeded()) {
            undo();
        }
    }

    private void dropLastTurn() {
        if (lastTurn != null) {
            lastTurn.complete(null);
            lastTurn = null;
        }
    }

    private void stopListening() {
        dropLastTurn();
        if (listening != null) {
            L l = listening;
            listening = null;
            readyAtTry = false;
            unlisten(l);
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{" + name + "}";
    }
}
