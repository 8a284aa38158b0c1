package io.dlock.redis;

import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockConfigurationException;
import io.dlock.redis.internal.RedisBackends;
import io.dlock.spi.BackendContext;
import io.dlock.spi.LockBackend;
import io.dlock.spi.support.AbstractLockProvider;
import io.dlock.tck.ClusterControl;
import io.dlock.tck.ProxiedFixture;
import io.dlock.tck.ServerControl;
import io.dlock.tck.TckFixture;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The TCK fixture for Redis Cluster mode ({@code redis-cluster://}): a {@link RedisClusterNodes}
 * cluster of 3 primaries and 3 replicas, the URI naming every node as a seed.
 *
 * <p>Lock-delays as in {@link RedisFixture} (10 s for the core suite, 2 s for the fault suite). A
 * fresh cluster would refuse grants for one lock-delay per slot at first touch, so the fixture
 * marks every slot's lock-delay passed on its primary once ({@link RedisClusterNodes#markLockDelayPassed}).
 * A failover promotes a replica with another run id, so the failed-over slots do wait one
 * lock-delay, as a deployment must.
 *
 * <p>Freezable clients go through one {@link io.dlock.tck.TcpProxy} per node: a client learns the
 * nodes' addresses from {@code CLUSTER SLOTS}, so it is opened with a provider that maps each node's
 * address to its proxy ({@link RedisBackends#open(io.dlock.spi.BackendContext, javax.net.ssl.SSLSocketFactory,
 * java.util.function.UnaryOperator)}, not public API).
 */
public final class RedisClusterFixture extends ProxiedFixture implements TckFixture {

    /** A user of the fixture's nodes whose ACL lets it touch no key of dlock's (for rule V4). */
    private static final String LIMITED_USER = "tck-limited";
    private static final String LIMITED_PASSWORD = "tck-limited-pw";

    private final RedisClusterNodes nodes;
    private final Duration lockDelay;

    /** Starts a cluster for the core suite. */
    public RedisClusterFixture() {
        this(RedisFixture.CORE_LOCK_DELAY);
    }

    /**
     * Starts a cluster whose clients use the given lock-delay.
     *
     * @param lockDelay the clients' {@code lockDelay}: at least the longest lease the suite takes
     */
    public RedisClusterFixture(Duration lockDelay) {
        this.lockDelay = lockDelay;
        this.nodes = RedisClusterNodes.start(List.of("--user", LIMITED_USER, "on", ">" + LIMITED_PASSWORD, "~other:*",
                "&*", "+@all"), null);
        try {
            nodes.markLockDelayPassed(RedisServer.DEFAULT_PREFIX);
        } catch (RuntimeException | Error e) {
            nodes.close();
            throw e;
        }
    }

    RedisClusterNodes nodes() {
        return nodes;
    }

    @Override
    public String name() {
        return "redis-cluster";
    }

    @Override
    protected List<InetSocketAddress> endpoints() {
        List<InetSocketAddress> out = new ArrayList<>();
        for (int i = 0; i < nodes.size(); i++) {
            out.add(nodes.node(i).address());
        }
        return out;
    }

    @Override
    protected String uri(List<InetSocketAddress> endpoints) {
        StringBuilder seeds = new StringBuilder();
        for (InetSocketAddress a : endpoints) {
            seeds.append(seeds.length() == 0 ? "" : ",").append(a.getHostString()).append(':').append(a.getPort());
        }
        return "redis-cluster://" + seeds + "?lockDelay=" + lockDelay;
    }

    /** Opens the client with every node address the cluster names mapped to that node's proxy. */
    @Override
    protected LockClient openProxied(LockClientConfig config, Map<InetSocketAddress, InetSocketAddress> proxied) {
        return LockClient.open(config, new MappedProvider(proxied));
    }

    /** dlock-redis's provider for Cluster URIs, connecting through an address map. */
    private static final class MappedProvider extends AbstractLockProvider {
        private final Map<InetSocketAddress, InetSocketAddress> map;

        MappedProvider(Map<InetSocketAddress, InetSocketAddress> map) {
            super("redis", Set.of("redis-cluster"), "through proxies");
            this.map = map;
        }

        @Override
        protected LockBackend<?> openBackend(BackendContext context) {
            return RedisBackends.open(context, null, a -> {
                for (Map.Entry<InetSocketAddress, InetSocketAddress> e : map.entrySet()) {
                    if (e.getKey().getPort() == a.getPort() && e.getKey().getHostString().equals(a.getHostString())) {
                        return e.getValue();
                    }
                }
                return a; // a proxy's own address (the URI's seeds), or a node this fixture did not start
            });
        }
    }

    @Override
    public Optional<String> unreachableUri() {
        return Optional.of("redis-cluster://" + RedisServer.HOST + ":" + RedisServer.freePort() + ","
                + RedisServer.HOST + ":" + RedisServer.freePort());
    }

    /**
     * A wrong password ({@code CREDENTIALS}) and a user whose ACL allows no key under dlock's prefix
     * ({@code PERMISSION}).
     */
    @Override
    public Map<LockConfigurationException.Kind, String> misconfiguredUris() {
        String at = "@" + nodes.seeds() + "?lockDelay=" + lockDelay;
        return Map.of(LockConfigurationException.Kind.CREDENTIALS,
                "redis-cluster://" + LIMITED_USER + ":not-" + LIMITED_PASSWORD + at,
                LockConfigurationException.Kind.PERMISSION,
                "redis-cluster://" + LIMITED_USER + ":" + LIMITED_PASSWORD + at);
    }

    /** Pauses, kills and restarts every node of the cluster. */
    @Override
    public Optional<ServerControl> server() {
        return Optional.of(new ServerControl() {
            @Override
            public void pause() {
                nodes.pauseAll();
            }

            @Override
            public void resume() {
                nodes.resumeAll();
            }

            @Override
            public void kill() {
                nodes.killAll();
            }

            @Override
            public void restart() {
                nodes.restartAll();
            }

            @Override
            public boolean restartLosesLocks() {
                return true; // no persistence (--save '', --appendonly no)
            }
        });
    }

    /** The leader is the primary serving the contended lock: S9's name is random, so it is found by its key. */
    @Override
    public Optional<ClusterControl> cluster() {
        return Optional.of(new ClusterControl() {
            @Override
            public int size() {
                return nodes.size();
            }

            @Override
            public String killLeader() {
                int i = nodes.killPrimaryHoldingALock();
                return "primary " + nodes.node(i);
            }

            @Override
            public void restartKilled() {
                nodes.restartKilled();
            }
        });
    }

    @Override
    public void close() {
        nodes.close();
    }

    @Override
    public String toString() {
        return "RedisClusterFixture{" + nodes + ", lockDelay " + lockDelay + "}";
    }
}
