package io.dlock.tck;

import io.dlock.LockBackendException;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.Grant;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.RenewOutcome;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * For a backend's own tests that drive its {@link io.dlock.spi.LockBackend} directly, as the core
 * does: reads the SPI's typed answers in the shape assertions want (a grant or a failed
 * assertion, one boolean per renewed grant, whether a release released), and waits for an
 * attempt's turn the way the core does. Stateless; every method is thread-safe.
 */
public final class SpiAnswers {

    private SpiAnswers() { }

    /**
     * Waits for an attempt's turn as the core does, but blocking the calling thread: asks
     * {@link AcquireAttempt#turn(Duration)} for its stage and waits for the first of the stage's
     * completion (normal or exceptional) and {@code maxWait}.
     *
     * @param attempt the attempt, after a busy answer
     * @param maxWait the longest wait, not negative
     * @return true if the stage completed (a notification, or "try now"), false if the wait ran out
     * @throws InterruptedException if the thread is interrupted while waiting
     * @throws IllegalArgumentException if an argument is null or {@code maxWait} negative
     * @throws io.dlock.LockBackendException if {@code turn} throws it
     */
    public static boolean awaitTurn(AcquireAttempt<?> attempt, Duration maxWait) throws InterruptedException {
        if (attempt == null || maxWait == null || maxWait.isNegative()) {
            throw new IllegalArgumentException(attempt == null ? "attempt must not be null"
                    : "maxWait must be zero or positive, was " + maxWait);
        }
        CompletionStage<Void> stage = attempt.turn(maxWait);
        if (stage == null) {
            throw new AssertionError("turn(" + maxWait + ") answered null, not a stage");
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        stage.whenComplete((v, t) -> done.complete(null));
        try {
            done.get(Math.min(maxWait.toNanos(), Long.MAX_VALUE / 4), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new IllegalStateException(e); // never: done is only completed normally
        }
    }

    /**
     * @param result an attempt's answer
     * @return whether it is a grant
     * @throws IllegalArgumentException if {@code result} is {@code null}
     */
    public static boolean isGranted(AttemptResult<?> result) {
        if (result == null) {
            throw new IllegalArgumentException("result must not be null");
        }
        return result instanceof AttemptResult.Granted<?>;
    }

    /**
     * @param result an attempt's answer, expected to be a grant
     * @param <S> the backend's per-grant state type
     * @return the grant
     * @throws AssertionError if it is busy
     * @throws IllegalArgumentException if {@code result} is {@code null}
     */
    public static <S> AttemptResult.Granted<S> granted(AttemptResult<S> result) {
        if (result instanceof AttemptResult.Granted<S> granted) {
            return granted;
        }
        if (result == null) {
            throw new IllegalArgumentException("result must not be null");
        }
        throw new AssertionError("expected a grant, the backend answered " + result);
    }

    /**
     * @param result an attempt's answer, expected to be a grant
     * @return the grant's fencing token
     * @throws AssertionError if it is busy
     */
    public static long token(AttemptResult<?> result) {
        return granted(result).fencingToken();
    }

    /**
     * The grant the core would make of an attempt's answer, to renew and release it.
     *
     * @param request the request of the attempt
     * @param result its answer, expected to be a grant
     * @param <S> the backend's per-grant state type
     * @return the grant
     * @throws AssertionError if the answer is busy
     */
    public static <S> Grant<S> grant(AcquireRequest request, AttemptResult<S> result) {
        return Grant.of(request, granted(result));
    }

    /**
     * Reads renew's outcomes as the old boolean answer: true for renewed, false for not held; an
     * unknown outcome is thrown, as a whole-batch failure is.
     *
     * @param outcomes what renew answered; {@code null} fails the check as a wrong answer
     * @return one boolean per outcome, in order
     * @throws LockBackendException the cause of the first unknown outcome
     * @throws AssertionError if the list or an element is {@code null}
     */
    public static boolean[] renewed(List<RenewOutcome> outcomes) {
        if (outcomes == null) {
            throw new AssertionError("renew answered null");
        }
        boolean[] out = new boolean[outcomes.size()];
        for (int i = 0; i < out.length; i++) {
            RenewOutcome o = outcomes.get(i);
            if (o instanceof RenewOutcome.Unknown unknown) {
                throw unknown.cause();
            }
            if (o == null) {
                throw new AssertionError("renew answered a null outcome at " + i);
            }
            out[i] = o instanceof RenewOutcome.Renewed;
        }
        return out;
    }

    /**
     * @param outcome what release answered; {@code null} fails the check as a wrong answer
     * @return true if it released the grant, false if not held
     * @throws AssertionError if {@code outcome} is {@code null}
     */
    public static boolean released(ReleaseOutcome outcome) {
        if (outcome == null) {
            throw new AssertionError("release answered null");
        }
        return outcome == ReleaseOutcome.RELEASED;
    }
}
