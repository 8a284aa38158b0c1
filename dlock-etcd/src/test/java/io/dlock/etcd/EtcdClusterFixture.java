package io.dlock.etcd;

import io.dlock.tck.ClusterControl;
import io.dlock.tck.ProxiedFixture;
import io.dlock.tck.ServerControl;
import io.dlock.tck.TckFixture;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The TCK fixture for the fault tier: a 3-member etcd cluster on loopback ports (heartbeat 100 ms,
 * election timeout 500 ms). {@link #server()} acts on the whole service (every member paused,
 * killed or restarted at once); {@link #cluster()} kills the leader and restarts it, and, where the
 * members run in network namespaces (root on Linux), cuts one member off from its peers while
 * clients still reach it. Clients get every member's address and can be frozen through one TCP
 * proxy per member.
 */
public final class EtcdClusterFixture extends ProxiedFixture implements TckFixture {

    private final EtcdCluster cluster;
    private final List<Integer> killed = new ArrayList<>();
    private final java.util.concurrent.atomic.AtomicInteger isolations = new java.util.concurrent.atomic.AtomicInteger();

    /** Starts a 3-member etcd cluster for this fixture. */
    public EtcdClusterFixture() {
        this.cluster = EtcdCluster.start(3, null);
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

    @Override
    public Optional<ServerControl> server() {
        return Optional.of(new ServerControl() {
            @Override
            public void pause() {
                cluster.pauseAll();
            }

            @Override
            public void resume() {
                cluster.resumeAll();
            }

            @Override
            public void kill() {
                cluster.killAll();
            }

            @Override
            public void restart() {
                cluster.restartStopped();
            }
        });
    }

    @Override
    public Optional<ClusterControl> cluster() {
        return Optional.of(new ClusterControl() {
            @Override
            public int size() {
                return cluster.size();
            }

            @Override
            public String killLeader() {
                int leader = cluster.leader();
                EtcdCluster.Member m = cluster.member(leader);
                String label = m.toString();
                m.kill();
                synchronized (killed) {
                    killed.add(leader);
                }
                // returns once the others have elected a new leader (election timeout 500 ms)
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
                while (System.nanoTime() - deadline < 0) {
                    int now = cluster.leader();
                    if (now != leader) {
                        break;
                    }
                    EtcdCluster.sleep(50);
                }
                return label;
            }

            @Override
            public boolean canIsolateMembers() {
                return cluster.canIsolate();
            }

            /**
             * Cuts the leader off from its peers on odd calls and a follower on even ones (a real
             * partition of the peer network, see {@link EtcdCluster}); returns once the cluster
             * shows it: the member has no leader and the others agree on another.
             */
            @Override
            public String isolateMember() {
                if (!cluster.canIsolate()) {
                    throw new UnsupportedOperationException("this etcd cluster does not run in network namespaces");
                }
                int leader = cluster.leader();
                boolean cutLeader = isolations.getAndIncrement() % 2 == 0;
                int victim = leader;
                for (int i = 1; !cutLeader && i < cluster.size(); i++) {
                    if (cluster.member((leader + i) % cluster.size()).running()) {
                        victim = (leader + i) % cluster.size();
                        break;
                    }
                }
                EtcdCluster.Member m = cluster.member(victim);
                cluster.isolate(victim);
                return m + (cutLeader ? " (the leader)" : " (a follower)");
            }

            @Override
            public void healIsolation() {
                cluster.heal();
            }

            @Override
            public void restartKilled() {
                List<Integer> toRestart;
                synchronized (killed) {
                    toRestart = new ArrayList<>(killed);
                    killed.clear();
                }
                for (int i : toRestart) {
                    cluster.member(i).restart();
                }
            }
        });
    }

    @Override
    public void close() {
        cluster.close();
    }

    @Override
    public String toString() {
        return "EtcdClusterFixture{" + cluster + "}";
    }
}
