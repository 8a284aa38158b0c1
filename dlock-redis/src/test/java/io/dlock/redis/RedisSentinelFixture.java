package io.dlock.redis;

import io.dlock.LockConfigurationException;
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

/**
 * The TCK fixture for Redis Sentinel ({@code redis-sentinel://}): a {@link RedisSentinelGroup}
 * (one primary, two replicas, three sentinels) on free loopback ports, control of its data nodes
 * ({@link #server()}: all at once) and of the primary ({@link #cluster()}: the sentinels replace a
 * killed primary within a few seconds). Freezable clients reach the data nodes through one proxy
 * each, learnt from a {@link SentinelStub} (itself behind a proxy) that names the primary's proxy.
 *
 * <p>Lock-delays as in {@link RedisFixture}: 10 s for the core suite, 2 s for the fault suite. A
 * promoted replica has another run id than the one in the lock-delay marker, so it grants nothing
 * for one lock-delay after a failover: what lets the fixture declare
 * {@code SURVIVES_SERVER_FAILOVER}.
 */
public final class RedisSentinelFixture extends ProxiedFixture implements TckFixture {

    /** A user of the data nodes whose ACL lets it touch no key of dlock's (for rule V4). */
    private static final String LIMITED_USER = "tck-limited";
    private static final String LIMITED_PASSWORD = "tck-limited-pw";

    private final RedisSentinelGroup group;
    private final SentinelStub stub;
    private final Duration lockDelay;

    /** Starts a group for the core suite. */
    public RedisSentinelFixture() {
        this(RedisFixture.CORE_LOCK_DELAY);
    }

    /**
     * Starts a group whose clients use the given lock-delay, and waits it out once.
     *
     * @param lockDelay the clients' {@code lockDelay}: at least the longest lease the suite takes
     */
    public RedisSentinelFixture(Duration lockDelay) {
        this.lockDelay = lockDelay;
        this.group = RedisSentinelGroup.start(List.of("--user", LIMITED_USER, "on", ">" + LIMITED_PASSWORD, "~other:*",
                "&*", "+@all"), null, null);
        this.stub = new SentinelStub(group);
        try {
            TestSupport.waitOutTheFirstLockDelay(clientConfig(), lockDelay, "the Sentinel group");
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    RedisSentinelGroup group() {
        return group;
    }

    @Override
    public String name() {
        return "redis-sentinel";
    }

    /**
     * The stand-in sentinel and the data nodes: a freezable client gets a proxy in front of each
     * ({@link ProxiedFixture}), and the stub names the primary's proxy (see {@link SentinelStub}).
     */
    @Override
    protected List<InetSocketAddress> endpoints() {
        List<InetSocketAddress> out = new ArrayList<>();
        out.add(stub.address());
        for (RedisServer n : group.nodes()) {
            out.add(n.address());
        }
        return out;
    }

    /** The real sentinels for {@link #endpoints()}; for proxies, the first (the stub's) with the master name mapping the rest. */
    @Override
    protected String uri(List<InetSocketAddress> endpoints) {
        if (endpoints.equals(endpoints())) {
            return group.uri() + "?lockDelay=" + lockDelay;
        }
        List<Integer> ports = new ArrayList<>();
        for (InetSocketAddress a : endpoints.subList(1, endpoints.size())) {
            ports.add(a.getPort());
        }
        InetSocketAddress s = endpoints.get(0);
        return "redis-sentinel://" + s.getHostString() + ":" + s.getPort() + "/" + SentinelStub.masterName(ports)
                + "?lockDelay=" + lockDelay;
    }

    @Override
    public Optional<String> unreachableUri() {
        return Optional.of("redis-sentinel://" + RedisServer.HOST + ":" + RedisServer.freePort() + "/"
                + RedisSentinelGroup.MASTER);
    }

    /**
     * A wrong data-node password ({@code CREDENTIALS}) and a data-node user whose ACL allows no key
     * under dlock's prefix ({@code PERMISSION}); the sentinels answer both.
     */
    @Override
    public Map<LockConfigurationException.Kind, String> misconfiguredUris() {
        String at = "@" + group.sentinelHosts() + "/" + RedisSentinelGroup.MASTER + "?lockDelay=" + lockDelay;
        return Map.of(LockConfigurationException.Kind.CREDENTIALS,
                "redis-sentinel://" + LIMITED_USER + ":not-" + LIMITED_PASSWORD + at,
                LockConfigurationException.Kind.PERMISSION, "redis-sentinel://" + LIMITED_USER + ":" + LIMITED_PASSWORD + at);
    }

    /** Every data node at once: paused (the sentinels too, so that none fails over), killed, restarted. */
    @Override
    public Optional<ServerControl> server() {
        return Optional.of(new ServerControl() {
            @Override
            public void pause() {
                group.pauseAll();
            }

            @Override
            public void resume() {
                group.resumeAll();
            }

            @Override
            public void kill() {
                group.killAllData();
            }

            @Override
            public void restart() {
                group.restartAllData();
            }

            @Override
            public boolean restartLosesLocks() {
                return true; // the data nodes run without persistence
            }
        });
    }

    /** The primary: killed (the sentinels promote a replica), and restarted as a replica. */
    @Override
    public Optional<ClusterControl> cluster() {
        return Optional.of(new ClusterControl() {
            @Override
            public int size() {
                return group.nodes().size();
            }

            @Override
            public String killLeader() {
                return group.killPrimary();
            }

            @Override
            public void restartKilled() {
                group.restartKilled();
            }
        });
    }

    @Override
    public void close() {
        try {
            if (stub != null) {
                stub.close();
            }
        } finally {
            group.close();
        }
    }

    @Override
    public String toString() {
        return "RedisSentinelFixture{" + group + ", lockDelay " + lockDelay + "}";
    }
}
