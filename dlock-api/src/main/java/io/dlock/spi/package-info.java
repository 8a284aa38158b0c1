/**
 * The service-provider interface: what a backend implements so that dlock's shared core can drive
 * it. A backend supplies only the remote primitives (one acquire attempt, a notification that the
 * lock may have changed, batched renewal, owner-checked release, holder query); validity, renewal
 * scheduling, backoff, waiting, local waiter queues, timeouts, cancellation and listeners are done
 * once, in the core, for every backend.
 *
 * <p>The SPI is typed by the backend's per-grant state {@code S}: a {@link io.dlock.spi.LockBackend
 * LockBackend&lt;S&gt;} answers {@link io.dlock.spi.AttemptResult.Granted Granted&lt;S&gt;} with its
 * state, and gets it back in the {@link io.dlock.spi.Grant Grant&lt;S&gt;} the core passes to
 * {@code renew} and {@code release}. The core keeps the user's {@link io.dlock.Lease} apart from
 * the grant: neither side can reach the other's object.
 *
 * <p><b>Rules for every backend call</b> ({@link io.dlock.spi.LockBackend},
 * {@link io.dlock.spi.AcquireAttempt}):
 * <ol>
 *   <li><b>Bounded.</b> Every call returns or throws {@link io.dlock.LockBackendException} within
 *       the operation timeout ({@link io.dlock.spi.BackendContext#operationTimeout()}).
 *       {@link io.dlock.spi.AcquireAttempt#turn AcquireAttempt.turn} returns at once: the wait
 *       between tries is a stage the backend completes from a notification's callback, and the
 *       core's timer, never a thread the backend holds.</li>
 *   <li><b>Interrupts.</b> An interrupted call throws {@code LockBackendException} and keeps the
 *       thread's interrupt flag set (a call whose answer is already in may return it instead).
 *       A backend that catches {@code InterruptedException} restores the flag.</li>
 *   <li><b>Abandon.</b> {@link io.dlock.spi.AcquireAttempt#abandon()} never throws and is
 *       idempotent.</li>
 *   <li><b>Threads.</b> Every backend method is thread-safe. Each attempt gets one call at a time,
 *       each happening-before the next (possibly from different threads).</li>
 *   <li><b>Renewal.</b> {@code renew} answers one {@link io.dlock.spi.RenewOutcome} per grant, in
 *       order; a partial failure reports {@code unknown} only for the grants that failed. Throwing
 *       means {@code unknown} for all.</li>
 *   <li><b>Arguments.</b> The core never passes {@code null} to a backend. A provider's own
 *       public methods should reject a {@code null} or bad argument with
 *       {@link java.lang.IllegalArgumentException} naming the parameter, as the whole API does
 *       ({@link io.dlock.spi.support.Arguments}; {@link io.dlock.spi.support.AbstractLockProvider}
 *       does it for {@code open}). This is a convention, not a TCK rule: dlock's own providers are
 *       held to it by a build test, a third-party provider is not checked.</li>
 *   <li><b>Events.</b> Losses the backend learns of on its own go to
 *       {@link io.dlock.spi.BackendEvents}, named by owner id.</li>
 * </ol>
 *
 * <p>The support kit {@link io.dlock.spi.support} keeps rules 1 and 2 for a backend's waits
 * ({@link io.dlock.spi.support.BoundedCalls}, {@link io.dlock.spi.support.Deadline}) and retries
 * the clean-ups that {@code abandon} and {@code release} could not finish
 * ({@link io.dlock.spi.support.RetryingCleaner}).
 *
 * <p><b>What the core guarantees:</b> one in-flight call per attempt; {@code renew} and
 * {@code release} only for grants this backend made; {@code close} last; lease times within
 * the backend's minimum and maximum; an operation timeout that is positive.
 *
 * <p>Providers are found with {@link java.util.ServiceLoader} through
 * {@code META-INF/services/io.dlock.spi.LockProvider}, or a module's {@code provides}.
 * {@code docs/TCK.md} has a complete example provider and the TCK that checks one.
 */
package io.dlock.spi;
