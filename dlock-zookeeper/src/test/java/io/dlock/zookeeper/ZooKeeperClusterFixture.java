package io.dlock.zookeeper;

import io.dlock.tck.ClusterControl;
import io.dlock.tck.ProxiedFixture;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;

/**
 * The fault tier's cluster fixture: a three-member ensemble (curator-test {@link TestingCluster},
 * 200 ms ticks), clients connected to all three members through {@link io.dlock.tck.TcpProxy}
 * instances, and {@link ClusterControl} that kills the current leader. Same session, lease and
 * credentials as {@link ZooKeeperFixture}.
 */
public class ZooKeeperClusterFixture extends ProxiedFixture {

    private final TestingCluster cluster = ZkServers.cluster(3);
    private final List<InstanceSpec> killed = new ArrayList<>();

    @Override
    public String name() {
        return "zookeeper";
    }

    @Override
    protected List<InetSocketAddress> endpoints() {
        return cluster.getInstances().stream().map(ZkServers::address).collect(Collectors.toList());
    }

    @Override
    protected String uri(List<InetSocketAddress> endpoints) {
        return "zookeeper://tck:tck-secret@"
                + endpoints.stream().map(a -> "127.0.0.1:" + a.getPort()).collect(Collectors.joining(","))
                + "/dlock-tck?sessionTimeout=" + ZooKeeperFixture.SESSION;
    }

    /** The session timeout, as {@link ZooKeeperFixture#leaseTime()} explains. */
    @Override
    public Duration leaseTime() {
        return ZooKeeperFixture.SESSION;
    }

    @Override
    public Optional<ClusterControl> cluster() {
        return Optional.of(new ClusterControl() {
            @Override
            public int size() {
                return cluster.getInstances().size();
            }

            @Override
            public synchronized String killLeader() {
                InstanceSpec leader = awaitLeader(null);
                try {
                    cluster.killServer(leader);
                } catch (Exception e) {
                    throw new IllegalStateException("could not kill member " + leader.getServerId(), e);
                }
                killed.add(leader);
                InstanceSpec next = awaitLeader(leader);
                return "member " + leader.getServerId() + " (member " + next.getServerId() + " leads now)";
            }

            @Override
            public synchronized void restartKilled() {
                for (InstanceSpec spec : killed) {
                    try {
                        cluster.restartServer(spec);
                    } catch (Exception e) {
                        throw new IllegalStateException("could not restart member " + spec.getServerId(), e);
                    }
                }
                killed.clear();
                awaitLeader(null);
            }
        });
    }

    /** Waits for a leader other than {@code not}; generous: an election with 200 ms ticks takes about a second. */
    private InstanceSpec awaitLeader(InstanceSpec not) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() - deadline < 0) {
            InstanceSpec leader = ZkServers.leader(cluster);
            if (leader != null && !leader.equals(not)) {
                return leader;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for a leader", e);
            }
        }
        throw new IllegalStateException("no leader elected within 30 s");
    }

    @Override
    public void close() {
        try {
            cluster.close();
        } catch (IOException e) {
            throw new IllegalStateException("could not stop the ensemble", e);
        }
    }
}
