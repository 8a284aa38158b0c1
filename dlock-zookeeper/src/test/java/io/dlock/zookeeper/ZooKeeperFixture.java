package io.dlock.zookeeper;

import io.dlock.LockConfigurationException;
import io.dlock.tck.ProxiedFixture;
import io.dlock.tck.ServerControl;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;

/**
 * The TCK fixture: one ZooKeeper server (ZooKeeper's own server main, in a child JVM, so that it
 * can be paused, killed and restarted) with a 200 ms tick, clients with a 3 s session
 * authenticated by digest (so the ACL code path runs in every rule) under a chroot, leases of 2 s.
 * Clients are frozen through {@link io.dlock.tck.TcpProxy}.
 */
public class ZooKeeperFixture extends ProxiedFixture {

    /** The session every fixture client asks for; the server grants it (ticks allow 0.4-4 s). */
    static final Duration SESSION = Duration.ofSeconds(3);

    /** A node whose ACL lets everyone read it and nobody create under it (for rule V4). */
    private static final String READ_ONLY_CHROOT = "/dlock-tck-read-only";

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

    /**
     * A chroot whose node lets nobody create children, as one set up for another identity would
     * ({@code PERMISSION}: the server answers NOAUTH). The node is made on the first call.
     */
    @Override
    public Map<LockConfigurationException.Kind, String> misconfiguredUris() {
        String connect = "127.0.0.1:" + server.port();
        try (CuratorFramework admin = CuratorFrameworkFactory.newClient(connect, new RetryOneTime(100))) {
            admin.start();
            if (!admin.blockUntilConnected(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no connection to the fixture's ZooKeeper at " + connect);
            }
            admin.create().withACL(ZooDefs.Ids.READ_ACL_UNSAFE).forPath(READ_ONLY_CHROOT);
        } catch (KeeperException.NodeExistsException made) {
            // made by an earlier call
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while preparing the fixture", e);
        } catch (Exception e) {
            throw new IllegalStateException("could not make " + READ_ONLY_CHROOT + " on the fixture's ZooKeeper", e);
        }
        return Map.of(LockConfigurationException.Kind.PERMISSION, "zookeeper://tck:tck-secret@" + connect
                + READ_ONLY_CHROOT + "?sessionTimeout=" + SESSION);
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
