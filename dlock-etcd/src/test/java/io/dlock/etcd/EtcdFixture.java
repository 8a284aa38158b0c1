package io.dlock.etcd;

import io.dlock.tck.ProxiedFixture;
import io.dlock.tck.ServerControl;
import io.dlock.tck.TckFixture;
import java.net.InetSocketAddress;
import java.time.Duration;
import io.dlock.LockConfigurationException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The TCK fixture for etcd: one real {@code etcd} on free loopback ports, clients that can be
 * frozen through a TCP proxy, and control of the server process. Lease time 2 s: etcd leases have
 * whole-second TTLs and the backend's minimum is 2 s.
 */
public final class EtcdFixture extends ProxiedFixture implements TckFixture {

    private final EtcdCluster cluster;

    /** Starts an etcd for this fixture. */
    public EtcdFixture() {
        this.cluster = EtcdCluster.single();
        // the first jetcd request of a JVM loads gRPC, Netty and Vert.x: not within the TCK's 1 s timeout
        TestSupport.admin(cluster).close();
    }

    @Override
    public String name() {
        return "etcd";
    }

    @Override
    public Duration leaseTime() {
        return Duration.ofSeconds(2);
    }

    @Override
    public Duration operationTimeout() {
        return Duration.ofSeconds(1);
    }

    @Override
    protected List<InetSocketAddress> endpoints() {
        return cluster.addresses();
    }

    @Override
    protected String uri(List<InetSocketAddress> endpoints) {
        return "etcd://" + endpoints.stream().map(a -> a.getHostString() + ":" + a.getPort())
                .collect(Collectors.joining(","));
    }

    @Override
    public Optional<String> unreachableUri() {
        return Optional.of("etcd://" + EtcdCluster.HOST + ":" + EtcdCluster.freePort());
    }

    /**
     * Credentials for a server that has authentication off ({@code CREDENTIALS}): etcd refuses to
     * authenticate anyone, and jetcd, which authenticates before every call, can do nothing.
     */
    @Override
    public Map<LockConfigurationException.Kind, String> misconfiguredUris() {
        return Map.of(LockConfigurationException.Kind.CREDENTIALS, "etcd://tck:tck-password@"
                + cluster.addresses().get(0).getHostString() + ":" + cluster.addresses().get(0).getPort());
    }

    @Override
    public Optional<ServerControl> server() {
        EtcdCluster.Member m = cluster.member(0);
        return Optional.of(new ServerControl() {
            @Override
            public void pause() {
                m.pause();
            }

            @Override
            public void resume() {
                m.resume();
            }

            @Override
            public void kill() {
                m.kill();
            }

            @Override
            public void restart() {
                m.restart();
            }
        });
    }

    /** @return the server, for the backend's own tests */
    EtcdCluster etcd() {
        return cluster;
    }

    @Override
    public void close() {
        cluster.close();
    }

    @Override
    public String toString() {
        return "EtcdFixture{" + cluster + "}";
    }
}
