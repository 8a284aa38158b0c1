package io.dlock.redis;

import io.dlock.LockClientConfig;
import io.dlock.tck.ProxiedFixture;
import io.dlock.tck.ServerControl;
import io.dlock.tck.TckFixture;
import java.net.InetSocketAddress;
import java.time.Duration;
import io.dlock.LockConfigurationException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The TCK fixture for Redis: one real {@code redis-server} on a free loopback port, clients that
 * can be frozen through a TCP proxy, and control of the server process.
 *
 * <p>The server runs without persistence, so a restart loses every lock (S11 runs). Its clients
 * use a lock-delay ({@code lockDelay} in the URI) that covers the longest lease the suite takes,
 * as a deployment must: the TCK's leases are 1 s, and the core suite also takes leases of ten
 * lease times (S4, and the long leases of rules that must tell a release from an expiry). The
 * fault suite takes only 1 s leases, and its randomized run expects grants to resume within two
 * lease times and the operation timeout after a restart, so it uses a 2 s lock-delay. A fresh
 * server refuses grants for one lock-delay (it cannot tell a first start from a restart that lost
 * its data), so the fixture waits that out once, through the API, before the rules run.
 */
public final class RedisFixture extends ProxiedFixture implements TckFixture {

    /** The lock-delay for the core suite: ten of the TCK's 1 s leases. */
    static final Duration CORE_LOCK_DELAY = Duration.ofSeconds(10);
    /** The lock-delay for the fault suite: two of its 1 s leases. */
    static final Duration FAULT_LOCK_DELAY = Duration.ofSeconds(2);

    /** A user of the fixture's server whose ACL lets it touch no key of dlock's (for rule V4). */
    private static final String LIMITED_USER = "tck-limited";
    private static final String LIMITED_PASSWORD = "tck-limited-pw";

    private final RedisServer server;
    private final Duration lockDelay;

    /** Starts a redis-server for the core suite. */
    public RedisFixture() {
        this(CORE_LOCK_DELAY);
    }

    /**
     * Starts a redis-server whose clients use the given lock-delay, and waits it out once.
     *
     * @param lockDelay the clients' {@code lockDelay}: at least the longest lease the suite takes
     */
    public RedisFixture(Duration lockDelay) {
        this.lockDelay = lockDelay;
        this.server = RedisServer.start(List.of("--user", LIMITED_USER, "on", ">" + LIMITED_PASSWORD, "~other:*", "&*",
                "+@all"));
        try {
            TestSupport.waitOutTheFirstLockDelay(clientConfig(), lockDelay, "a fresh redis-server");
        } catch (RuntimeException | Error e) {
            server.close();
            throw e;
        }
    }

    @Override
    public String name() {
        return "redis";
    }

    @Override
    protected List<InetSocketAddress> endpoints() {
        return List.of(server.address());
    }

    @Override
    protected String uri(List<InetSocketAddress> endpoints) {
        InetSocketAddress a = endpoints.get(0);
        return "redis://" + a.getHostString() + ":" + a.getPort() + "?lockDelay=" + lockDelay;
    }

    @Override
    public Optional<String> unreachableUri() {
        return Optional.of("redis://" + RedisServer.HOST + ":" + RedisServer.freePort());
    }

    /**
     * A wrong password ({@code CREDENTIALS}) and a user whose ACL allows no key under dlock's prefix
     * ({@code PERMISSION}).
     */
    @Override
    public Map<LockConfigurationException.Kind, String> misconfiguredUris() {
        String at = "@" + RedisServer.HOST + ":" + server.port() + "?lockDelay=" + lockDelay;
        return Map.of(LockConfigurationException.Kind.CREDENTIALS, "redis://" + LIMITED_USER + ":not-" + LIMITED_PASSWORD + at,
                LockConfigurationException.Kind.PERMISSION, "redis://" + LIMITED_USER + ":" + LIMITED_PASSWORD + at);
    }

    @Override
    public Optional<ServerControl> server() {
        return Optional.of(new ServerControl() {
            @Override
            public void pause() {
                server.pause();
            }

            @Override
            public void resume() {
                server.resume();
            }

            @Override
            public void kill() {
                server.kill();
            }

            @Override
            public void restart() {
                server.restart();
            }

            @Override
            public boolean restartLosesLocks() {
                return true; // the test server runs without persistence (--save '', --appendonly no)
            }
        });
    }

    @Override
    public void close() {
        server.close();
    }

    @Override
    public String toString() {
        return "RedisFixture{" + server + ", lockDelay " + lockDelay + "}";
    }
}
