package io.dlock.zookeeper;

import io.dlock.tck.ProxiedFixture;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.curator.test.TestingServer;

/**
 * The TCK fixture: one embedded ZooKeeper server with a 200 ms tick, clients with a 3 s session
 * authenticated by digest (so the ACL code path runs in every rule), leases of 2 s. Clients are
 * frozen through {@link io.dlock.tck.TcpProxy}.
 */
public class ZooKeeperFixture extends ProxiedFixture {

    /** The session every fixture client asks for; the server grants it (ticks allow 0.4-4 s). */
    static final Duration SESSION = Duration.ofSeconds(3);

    private final TestingServer server = ZkServers.standalone();

    @Override
    public String name() {
        return "zookeeper";
    }

    @Override
    protected List<InetSocketAddress> endpoints() {
        return List.of(new InetSocketAddress("127.0.0.1", server.getPort()));
    }

    @Override
    protected String uri(List<InetSocketAddress> endpoints) {
        return "zookeeper://tck:tck-secret@"
                + endpoints.stream().map(a -> "127.0.0.1:" + a.getPort()).collect(Collectors.joining(","))
                + "/dlock-tck?sessionTimeout=" + SESSION;
    }

    /** 2 s: below the 3 s session, which bounds every lease. */
    @Override
    public Duration leaseTime() {
        return Duration.ofSeconds(2);
    }

    @Override
    public Optional<String> unreachableUri() {
        return Optional.of("zookeeper://127.0.0.1:" + ZkServers.closedPort() + "?sessionTimeout=" + SESSION);
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException e) {
            throw new IllegalStateException("could not stop the embedded ZooKeeper server", e);
        }
    }
}
