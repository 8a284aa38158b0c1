/**
 * The provider author's kit: the plumbing every backend needs, written once.
 *
 * <ul>
 *   <li>{@link io.dlock.spi.support.UriReader} reads the backend's URI (every message names the
 *       part that is wrong and shows the URI redacted);</li>
 *   <li>{@link io.dlock.spi.support.Ids} makes random ids;</li>
 *   <li>{@link io.dlock.spi.support.LeaseTimes} converts lease times (rounded up, never to zero,
 *       never overflowing) and gives the abandon budget;</li>
 *   <li>{@link io.dlock.spi.support.AddressProbe} says what is at the servers' addresses when the
 *       client library cannot reach them (nothing listening, another service, no answer);</li>
 *   <li>{@link io.dlock.spi.support.Deadline} and {@link io.dlock.spi.support.BoundedCalls} make
 *       every backend call end by its deadline and keep the interrupt rule;</li>
 *   <li>{@link io.dlock.spi.support.RetryingCleaner} retries, in the background, the clean-ups
 *       that failed when first tried;</li>
 *   <li>{@link io.dlock.spi.support.ChangeSignal} lets waiters wait, without a thread, for a change
 *       (a release notice, a lost connection) after what their last try saw, and
 *       {@link io.dlock.spi.support.ListeningAttempt} is the acquisition of a backend told of
 *       releases on a shared channel: try, listen, wait for a change after the try.</li>
 * </ul>
 *
 * <p><b>The interrupt rule</b> (rule 2 of {@link io.dlock.spi}), and the two ways the kit keeps it
 * for a wait ({@code ABORT}, {@code FINISH}), are written out in
 * {@link io.dlock.spi.support.BoundedCalls}.
 *
 * <p><b>A typical backend</b> makes, when it opens, one {@code BoundedCalls} (its client library's
 * failures mapped by a {@link io.dlock.spi.support.BoundedCalls.Failures} of its own) and one
 * {@code RetryingCleaner}, both with the context's thread factory; every call takes a
 * {@link io.dlock.spi.support.BoundedCalls#deadline()}; {@code abandon()} and a failed
 * {@code release} try once within {@link io.dlock.spi.support.LeaseTimes#abandonBudget} and
 * {@link io.dlock.spi.support.RetryingCleaner#submit submit} what failed, to be given up on once
 * the server's own expiry has ended it; {@code close()} closes the calls (failing every pending
 * wait at once) and then the cleaner. A backend with release notices on a shared channel extends
 * {@code ListeningAttempt} and has its listener signal a {@code ChangeSignal} per name. What to
 * send, what the library's exceptions mean, what a clean-up deletes, and how notices arrive
 * (subscribing, listening, reconnecting) stay in the backend.
 *
 * <p>Everything here is thread-safe. Only {@code BoundedCalls.withThreads} and
 * {@code RetryingCleaner} run threads, made by the factory they are given, at most as many as
 * configured, and only while there is work. Bad arguments get
 * {@link java.lang.IllegalArgumentException} naming the parameter. No duration overflows: one too
 * long to count in nanoseconds saturates at about 73 years.
 */
package io.dlock.spi.support;
