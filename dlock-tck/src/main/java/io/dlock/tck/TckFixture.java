package io.dlock.tck;

import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockConfigurationException;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * What a provider author supplies to run the TCK: how to make independent clients of one backend,
 * and optionally how to inject faults. A rule that needs a hook the fixture does not offer is
 * skipped, not failed.
 *
 * <p>One fixture serves one TCK class run ({@code @BeforeAll} to {@code @AfterAll}); it starts
 * whatever servers it needs on free loopback ports and stops them in {@link #close()}.
 */
public interface TckFixture extends AutoCloseable {

    /** @return the provider's name in reports, e.g. {@code redis} */
    String name();

    /**
     * Returns a configuration for a new, independent client (its own connection and session),
     * with the URI set. The TCK adjusts timeouts, clocks and lock options, then opens it with
     * {@link LockClient#open(LockClientConfig)}.
     *
     * @return a fresh builder
     */
    LockClientConfig.Builder clientConfig();

    /**
     * The lease time the TCK's locks use: short, so that expiry rules run fast, but at least the
     * backend's minimum. Default 1 second.
     *
     * @return the lease time
     */
    default Duration leaseTime() {
        return Duration.ofSeconds(1);
    }

    /**
     * The operation timeout of the TCK's clients. Default 1 second.
     *
     * @return the operation timeout
     */
    default Duration operationTimeout() {
        return Duration.ofSeconds(1);
    }

    /**
     * Opens a client whose network to the backend can be frozen: while frozen, nothing it sends
     * reaches the server and nothing comes back; what was sent is delivered late on unfreeze, as a
     * stalled network would. The generic way is {@link TcpProxy}, see {@link ProxiedFixture}.
     *
     * @param config the configuration the TCK prepared; the fixture may change its URI
     * @return the client, or empty if this fixture cannot freeze a client
     */
    default Optional<FreezableClient> openFreezable(LockClientConfig.Builder config) {
        return Optional.empty();
    }

    /**
     * Gives the fixture the TCK's seed, before the first client is opened, so that the randomness
     * of its links ({@link NetworkFault#LATENCY}'s delays) replays with the run. A fixture that
     * is never told uses {@link NetworkFault#defaultSeed()}. By default nothing happens.
     *
     * @param seed the seed of the run
     */
    default void useSeed(long seed) {
    }

    /**
     * A URI of this backend's scheme at which nothing answers (a closed loopback port, say).
     *
     * @return the URI, or empty if the backend has no network
     */
    default Optional<String> unreachableUri() {
        return Optional.empty();
    }

    /**
     * URIs of this backend's scheme that the backend must refuse for a configuration reason, by the
     * kind of {@link LockConfigurationException} it must report: a password the server rejects
     * ({@code CREDENTIALS}), a user the server's ACL denies ({@code PERMISSION}), a table that does
     * not exist ({@code MISSING_RESOURCE}), and so on. Rule V4 opens a client of each, with the
     * TCK's timeouts, and acquires once. Each URI must be refused every time, so the fixture sets up
     * whatever it needs (a second server with a password, a user without rights) on its first call.
     *
     * @return the URIs by kind; empty (the default) skips V4
     */
    default Map<LockConfigurationException.Kind, String> misconfiguredUris() {
        return Map.of();
    }

    /**
     * Control of the server process, for the fault rules.
     *
     * @return the control, or empty if the fixture cannot stop or pause its server
     */
    default Optional<ServerControl> server() {
        return Optional.empty();
    }

    /**
     * Control of the cluster's members, for the failover rule S9.
     *
     * @return the control, or empty if the fixture runs no cluster
     */
    default Optional<ClusterControl> cluster() {
        return Optional.empty();
    }

    /**
     * Says that a rule does not apply to this backend at all, with the reason, as opposed to a
     * capability it lacks: DynamoDB, for one, has no server failover a client could see, so S9
     * cannot apply. The rule is then skipped and the report shows "n/a" with the reason.
     *
     * @param rule the rule
     * @return the reason it does not apply, or empty if it does
     */
    default Optional<String> notApplicable(Rule rule) {
        return Optional.empty();
    }

    /**
     * Whether this run's results go into the compatibility report. The TCK's own deliberately
     * broken providers say no.
     *
     * @return true by default
     */
    default boolean reportable() {
        return true;
    }

    /** Stops the servers this fixture started. */
    @Override
    void close();
}
