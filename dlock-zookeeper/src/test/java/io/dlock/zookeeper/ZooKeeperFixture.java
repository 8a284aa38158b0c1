package io.dlock.zookeeper;

import io.dlock.tck.ProxiedFixture;
import io.dlock.tck.ServerControl;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The TCK fixture: one ZooKeeper server (ZooKeeper's own server main, in a child JVM, so that it
 * can be paused, killed and restarted) with a 200 ms tick, clients with a 3 s session
 * authenticated by digest (so the ACL code path runs in every rule) under a chroot, leases of 2 s.
 * Clients are frozen through {@link io.dlock.tck.TcpProxy}.
 */
public class ZooKeeperFixture extends ProxiedFixture {

    /** The session every fixture client asks for; the server grants it (ticks allow 0.4-4 s). */
    static final Duration SESSION = Duration.ofSeconds(3);

    private final ZkProcess server = ZkProcess.start();

    @Override
    public String name() {
        return "zookeeper";
    }

    @Override
    protected List<InetSocketAddress> endpoints() {
        return List.of(new InetSocketAddress("127.0.0.1", server.port()));
    }

    @Override
    protected String uri(List<InetSocketAddress> endpoints) {
        return "zookeeper://tck:tck-secret@"
                + endpoints.stream().map(a -> "127.0.0.1:" + a.getPort()).collect(Collectors.joining(","))
                + "/dlock-tck?sessionTimeout=" + SESSION;
    }

    /**
     * The session timeout: the lease is the session, so a crashed holder's lock frees when its
     * session expires on the server, one session timeout after its last heartbeat (L2 holds the
     * server to the lease the client asked for, so the two must be the same).
     */
    @Override
    public Duration leaseTime() {
        return SESSION;
    }

    @Override
    public Optional<String> unreachableUri() {
        return Optional.of("zookeeper://127.0.0.1:" + ZkServers.closedPort() + "?sessionTimeout=" + SESSION);
    }

    @Override
    public Optional<ServerControl> server() {
        return Optional.of(server);
    }

    @Override
    public void close() {
        server.close();
    }
}
