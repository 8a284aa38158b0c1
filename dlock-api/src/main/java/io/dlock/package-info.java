/**
 * dlock's API: distributed locks with leases and fencing tokens, and leader election, on any
 * backend a {@link io.dlock.spi.LockProvider} serves. Start with {@link io.dlock.LockClient}.
 *
 * <p><b>Arguments.</b> Every public constructor and method rejects a bad argument with
 * {@link java.lang.IllegalArgumentException} whose message starts with the parameter's name;
 * {@code null} is a bad argument unless the parameter's documentation says it is allowed, and is
 * never answered with a {@link java.lang.NullPointerException}.
 *
 * <p><b>Failures.</b> A backend that fails or does not answer within the operation timeout gives a
 * {@link io.dlock.LockBackendException}; one that refuses the configuration (credentials,
 * permissions, a missing table, TLS, another kind of server) gives its subclass
 * {@link io.dlock.LockConfigurationException}, which retrying does not fix. A closed client gives
 * {@link java.lang.IllegalStateException}. Blocking waits throw
 * {@link java.lang.InterruptedException}, the only checked exception.
 *
 * <p><b>Threads.</b> Clients, locks and leases are thread-safe and meant to be shared.
 */
package io.dlock;
