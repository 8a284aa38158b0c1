/**
 * The service-provider interface: what a backend implements so that dlock's shared core can drive
 * it. A backend supplies only the remote primitives (one acquire attempt, a native wait for the
 * lock to change, batched renewal, owner-checked release, holder query); validity, renewal
 * scheduling, backoff, local waiter queues, timeouts, cancellation and listeners are done once,
 * in the core, for every backend.
 *
 * <p>Providers are found with {@link java.util.ServiceLoader} through
 * {@code META-INF/services/io.dlock.spi.LockProvider}.
 */
package io.dlock.spi;
