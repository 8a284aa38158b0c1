/**
 * dlock: distributed locks and leader election with leases, automatic renewal, an honest
 * validity signal and fencing tokens, over a backend chosen at deploy time by a URI.
 *
 * <p>Users need {@code io.dlock}; provider authors {@code io.dlock.spi} and its support kit
 * {@code io.dlock.spi.support}. The shared core ({@code io.dlock.internal}) is not exported.
 * Providers are found with {@link java.util.ServiceLoader}: named modules that {@code provides
 * io.dlock.spi.LockProvider}, and jars on the class path with
 * {@code META-INF/services/io.dlock.spi.LockProvider}.
 */
module io.dlock {
    requires org.slf4j;

    exports io.dlock;
    exports io.dlock.spi;
    exports io.dlock.spi.support;

    uses io.dlock.spi.LockProvider;
}
