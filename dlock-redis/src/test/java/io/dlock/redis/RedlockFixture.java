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
import java.util.stream.Collectors;

/**
 * The TCK fixture for Redlock ({@code redlock://}): three independent {@code redis-server}s on free
 * loopback ports, clients that can be frozen through one TCP proxy per node, control of all three
 * ({@link #server()}) and of one at a time ({@link #cluster()}: Redlock has no leader, so
 * {@code killLeader()} kills the nodes in turn).
 *
 * <p>As {@link RedisFixture}: no persistence (a restart loses every lock), a 10 s lock-delay for the
 * core suite and 2 s for the fault suite, and the first lock-delay waited out through the API.
 */
public final class RedlockFixture extends ProxiedFixture implements TckFixture {

    /** A user of every node whose ACL lets it touch no key of dlock's (for rule V4). */
    private static final String LIMITED_USER = "tck-limited";
    private static final String LIMITED_PASSWORD = "tck-limited-pw";
    static final int NODES = 3;

    private final List<RedisServer> servers = new ArrayList<>();
    private final Duration lockDelay;
    private final List<Integer> killed = new ArrayList<>();
    private int nextVictim;

    /** Starts three redis-servers for the core suite. */
    public RedlockFixture() {
        this(RedisFixture.CORE_LOCK_DELAY);
    }

    /**
     * Starts three redis-servers whose clients use the given lock-delay, and waits it out once.
     *
     * @param lockDelay the clients' {@code lockDelay}: at least the longest lease the suite takes
     */
    public RedlockFixture(Duration lockDelay) {
        this.lockDelay = lockDelay;
        try {
            for (int i = 0; i < NODES; i++) {
                servers.add(RedisServer.start(List.of("--user", LIMITED_USER, "on", ">" + LIMITED_PASSWORD, "~other:*",
                        "&*", "+@all")));
            }
            TestSupport.waitOutTheFirstLockDelay(clientConfig(), lockDelay, "three fresh redis-servers");
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    @Override
    public String name() {
        return "redlock";
    }

    @Override
    protected List<InetSocketAddress> endpoints() {
        return servers.stream().map(RedisServer::address).collect(Collectors.toList());
    }

    @Override
    protected String uri(List<InetSocketAddress> endpoints) {
        return "redlock://" + hosts(endpoints) + "?lockDelay=" + lockDelay;
    }

    private static String hosts(List<InetSocketAddress> endpoints) {
        return endpoints.stream().map(a -> a.getHostString() + ":" + a.getPort()).collect(Collectors.joining(","));
    }

    @Override
    public Optional<String> unreachableUri() {
        return Optional.of("redlock://" + RedisServer.HOST + ":" + RedisServer.freePort() + "," + RedisServer.HOST + ":"
                + RedisServer.freePort() + "," + RedisServer.HOST + ":" + RedisServer.freePort());
    }

    /** A wrong password ({@code CREDENTIALS}) and a user whose ACL allows no key under dlock's prefix ({@code PERMISSION}). */
    @Override
    public Map<LockConfigurationException.Kind, String> misconfiguredUris() {
        String at = "@" + hosts(endpoints()) + "?lockDelay=" + lockDelay;
        return Map.of(LockConfigurationException.Kind.CREDENTIALS, "redlock://" + LIMITED_USER + ":not-" + LIMITED_PASSWORD + at,
                LockConfigurationException.Kind.PERMISSION, "redlock://" + LIMITED_USER + ":" + LIMITED_PASSWORD + at);
    }

    /** All three nodes at once: pause, kill and restart (each comes back empty and in its lock-delay). */
    @Override
    public Optional<ServerControl> server() {
        return Optional.of(new ServerControl() {
            @Override
            public void pause() {
                servers.forEach(RedisServer::pause);
            }

            @Override
            public void resume() {
                servers.forEach(RedisServer::resume);
            }

            @Override
            public void kill() {
                servers.forEach(RedisServer::kill);
            }

            @Override
            public void restart() {
                servers.forEach(RedisServer::restart);
            }

            @Override
            public boolean restartLosesLocks() {
                return true; // the test servers run without persistence (--save '', --appendonly no)
            }
        });
    }

    /**
     * One node at a time: {@code killLeader()} kills the next node in turn (Redlock has no leader;
     * the other two are the majority), {@code restartKilled()} brings the killed ones back empty,
     * in their lock-delay.
     */
    @Override
    public Optional<ClusterControl> cluster() {
        return Optional.of(new ClusterControl() {
            @Override
            public int size() {
                return NODES;
            }

            @Override
            public String killLeader() {
                int victim;
                synchronized (killed) {
                    victim = nextVictim;
                    nextVictim = (nextVictim + 1) % NODES;
                    killed.add(victim);
                }
                RedisServer s = servers.get(victim);
                s.kill();
                return "node " + victim + " (" + s + ")";
            }

            @Override
            public void restartKilled() {
                List<Integer> toRestart;
                synchronized (killed) {
                    toRestart = new ArrayList<>(killed);
                    killed.clear();
                }
                for (int i : toRestart) {
                    servers.get(i).restart();
                }
            }
        });
    }

    @Override
    public void close() {
        for (RedisServer s : servers) {
            s.close();
        }
    }

    @Override
    public String toString() {
        return "RedlockFixture{" + servers + ", lockDelay " + lockDelay + "}";
    }
}
