package io.dlock.tck.mem;

import io.dlock.spi.support.Arguments;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockConfigurationException;
import io.dlock.tck.FreezableClient;
import io.dlock.tck.NetworkFault;
import io.dlock.tck.ServerControl;
import io.dlock.tck.TckFixture;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The TCK fixture of the reference provider: a fresh {@link MemServer} per fixture. Its freezable
 * clients inject every {@link NetworkFault} kind into their {@link MemLink};
 * {@link NetworkFault#LATENCY}'s delays are drawn, per link, from seeds that {@link #useSeed(long)}
 * (by default {@link NetworkFault#defaultSeed()}) starts.
 */
public class MemFixture implements TckFixture {

    private static final AtomicInteger IDS = new AtomicInteger();

    /** The password of {@link #passwordServer}. */
    private static final String PASSWORD = "tck-password";

    private final String server = "tck-" + IDS.incrementAndGet();
    /** A server that requires a password, for rule V4. */
    private final String passwordServer = server + "-password";
    private final String scheme;
    private SplittableRandom seeds = new SplittableRandom(NetworkFault.defaultSeed()); // guarded by this

    /** Creates a fixture with its own server. */
    public MemFixture() {
        this("mem");
    }

    /**
     * Creates a fixture with its own server, opened through another scheme (for providers that
     * wrap the reference provider).
     *
     * @param scheme the URI scheme of the provider under test
     */
    protected MemFixture(String scheme) {
        this.scheme = scheme;
    }

    @Override
    public String name() {
        return scheme;
    }

    /** @return the URI of this fixture's server */
    protected String uri() {
        return scheme + "://" + server;
    }

    @Override
    public LockClientConfig.Builder clientConfig() {
        return LockClientConfig.builder(uri());
    }

    @Override
    public Duration leaseTime() {
        return Duration.ofMillis(600);
    }

    @Override
    public Duration operationTimeout() {
        return Duration.ofMillis(500);
    }

    /**
     * Sets the seed that the delays of {@link NetworkFault#LATENCY} are drawn from, for the
     * clients opened from now on (each link gets its own seed, drawn from this one in the order
     * the clients open).
     *
     * @param seed the seed, usually the TCK's
     */
    @Override
    public synchronized void useSeed(long seed) {
        seeds = new SplittableRandom(seed);
    }

    private synchronized long nextSeed() {
        return seeds.nextLong();
    }

    @Override
    public Optional<FreezableClient> openFreezable(LockClientConfig.Builder config) {
        Arguments.notNull("config", config);
        String linkId = UUID.randomUUID().toString();
        LockClient client = LockClient.open(config.uri(uri() + "?link=" + linkId).build());
        MemLink link = MemServer.named(server).link(linkId).orElseThrow();
        link.latencySeed(nextSeed());
        return Optional.of(link.freezable(client));
    }

    /**
     * A second server of this fixture's, started with a password, and a URI that gives another:
     * the server refuses it with kind {@code CREDENTIALS}.
     *
     * @return the wrong-password URI
     */
    @Override
    public Map<LockConfigurationException.Kind, String> misconfiguredUris() {
        MemServer.named(passwordServer).requirePassword(PASSWORD);
        return Map.of(LockConfigurationException.Kind.CREDENTIALS, scheme + "://:not-" + PASSWORD + "@" + passwordServer);
    }

    @Override
    public Optional<ServerControl> server() {
        MemServer s = MemServer.named(server);
        return Optional.of(new ServerControl() {
            @Override
            public void pause() {
                s.pause();
            }

            @Override
            public void resume() {
                s.resume();
            }

            @Override
            public void kill() {
                s.kill();
            }

            @Override
            public void restart() {
                s.resume();
            }

            @Override
            public boolean restartLosesLocks() {
                return true;
            }
        });
    }

    /**
     * A failover of the reference server: the "leader" is replaced by a replica that missed every
     * lock (asynchronous replication at its worst), while the fencing counter survives. The
     * reference provider stays safe through its lock-delay, though it does not declare
     * SURVIVES_SERVER_FAILOVER; a provider that declares it without a lock-delay fails S9 here.
     *
     * @return the control
     */
    @Override
    public Optional<io.dlock.tck.ClusterControl> cluster() {
        MemServer s = MemServer.named(server);
        return Optional.of(new io.dlock.tck.ClusterControl() {
            @Override
            public int size() {
                return 3;
            }

            @Override
            public String killLeader() {
                s.kill();
                s.resume(); // the replica answers at once, without the locks
                return "mem leader";
            }

            @Override
            public void restartKilled() {
                // the replica already serves; nothing to bring back
            }
        });
    }

    @Override
    public void close() {
        MemServer.drop(server);
        MemServer.drop(passwordServer);
    }
}
