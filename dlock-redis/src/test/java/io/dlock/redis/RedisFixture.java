package io.dlock.redis;

import io.dlock.tck.ProxiedFixture;
import io.dlock.tck.ServerControl;
import io.dlock.tck.TckFixture;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Optional;

/**
 * The TCK fixture for Redis: one real {@code redis-server} on a free loopback port, clients that
 * can be frozen through a TCP proxy, and control of the server process.
 */
public final class RedisFixture extends ProxiedFixture implements TckFixture {

    private final RedisServer server;

    /** Starts a redis-server for this fixture. */
    public RedisFixture() {
        this.server = RedisServer.start();
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
        return "redis://" + a.getHostString() + ":" + a.getPort();
    }

    @Override
    public Optional<String> unreachableUri() {
        return Optional.of("redis://" + RedisServer.HOST + ":" + RedisServer.freePort());
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
        });
    }

    @Override
    public void close() {
        server.close();
    }

    @Override
    public String toString() {
        return "RedisFixture{" + server + "}";
    }
}
