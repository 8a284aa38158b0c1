package io.dlock.tck;

import io.dlock.LockBackendException;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.Grant;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.RenewOutcome;
import java.util.List;

/**
 * For a backend's own tests that drive its {@link io.dlock.spi.LockBackend} directly, as the core
 * does: reads the SPI's typed answers in the shape assertions want (a grant or a failed
 * assertion, one boolean per renewed grant, whether a release released). Stateless; every method
 * is thread-safe.
 */
public final class SpiAnswers {

    private SpiAnswers() { }

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
