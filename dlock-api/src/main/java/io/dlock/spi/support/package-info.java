/**
 * The provider author's kit: the plumbing every backend needs, written once. A backend built on
 * it reads its URI with {@link io.dlock.spi.support.UriReader} (every message names the part that
 * is wrong and shows the URI redacted), makes random ids with {@link io.dlock.spi.support.Ids}, and
 * converts lease times with {@link io.dlock.spi.support.LeaseTimes} (rounded up, never to zero,
 * never overflowing), checks its arguments with {@link io.dlock.spi.support.Arguments} (the null
 * rule: {@code IllegalArgumentException} naming the parameter), and when its client library cannot reach the servers, asks
 * {@link io.dlock.spi.support.AddressProbe} what is at their addresses (nothing listening, another
 * service, no answer at all).
 *
 * <p>Everything here is thread-safe and holds no thread of its own. Bad arguments get
 * {@link java.lang.IllegalArgumentException} naming the parameter.
 */
package io.dlock.spi.support;
