/**
 * dlock's technology compatibility kit: the JUnit 5 suites every provider must pass
 * ({@code io.dlock.tck}), with the fixture hooks, fault injection and test kit they use, and the
 * {@code mem://} reference provider ({@code io.dlock.tck.mem}).
 *
 * <p>The suites' package is open to JUnit, which creates and runs their classes by reflection.
 */
module io.dlock.tck {
    requires transitive io.dlock;
    requires transitive org.junit.jupiter.api;
    requires java.management;
    requires org.opentest4j;

    exports io.dlock.tck;
    exports io.dlock.tck.mem;

    opens io.dlock.tck to org.junit.platform.commons;

    uses io.dlock.spi.LockProvider;

    provides io.dlock.spi.LockProvider with io.dlock.tck.mem.MemLockProvider;
}
