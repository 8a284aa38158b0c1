package io.dlock.zookeeper;

import io.dlock.tck.ClusterControl;
import io.dlock.tck.ProxiedFixture;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * The fault tier's cluster fixture: a three-member ensemble of server processes
 * ({@link ZkEnsemble}, 200 ms ticks), clients connected to all three members through
 * {@link io.dlock.tck.TcpProxy} instances, and {@link ClusterControl} that kills the current leader
 * and, where the members run in network namespaces (root on Linux), cuts one member off from its
 * peers while clients still reach it (the leader and a follower alternately). Same session, lease
 * and credentials as {@link ZooKeeperFixture}.
 */
public class ZooKeeperClusterFixture extends ProxiedFixture {

    private final ZkEnsemble ensemble = ZkEnsemble.start(3);
    private final List<Integer> killed = new ArrayList<>();
    private final AtomicInteger isolations = new AtomicInteger();

    @Override
    public String name() {
        return "zookeeper";
    }

    @Override
    protected List<InetSocketAddress> endpoints() {
        return ensemble.addresses();
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
                return ensemble.size();
            }

            @Override
            public synchronized String killLeader() {
                int leader = ensemble.awaitLeader(-1);
                ensemble.member(leader).kill();
                synchronized (killed) {
                    killed.add(leader);
                }
                int next = ensemble.awaitLeader(leader);
                return ensemble.member(leader) + " (member " + next + " leads now)";
            }

            @Override
            public synchronized void restartKilled() {
                List<Integer> toRestart;
                synchronized (killed) {
                    toRestart = new ArrayList<>(killed);
                    killed.clear();
                }
                for (int i : toRestart) {
                    ensemble.member(i).restart();
                }
                ensemble.awaitLeader(-1);
            }

            @Override
            public boolean canIsolateMembers() {
                return ensemble.canIsolate();
            }

            /**
             * Cuts the leader off from its peers on odd calls and a follower on even ones (a real
             * partition of the peer network, see {@link ZkEnsemble}); returns once the ensemble
             * shows it: the member serves no session, and the others serve with a leader.
             */
            @Override
            public synchronized String isolateMember() {
                if (!ensemble.canIsolate()) {
                    throw new UnsupportedOperationException("this ensemble does not run in network namespaces");
                }
                int leader = ensemble.awaitLeader(-1);
                boolean cutLeader = isolations.getAndIncrement() % 2 == 0;
                int victim = leader;
                for (int i = 1; !cutLeader && i < ensemble.size(); i++) {
                    if (ensemble.member((leader + i) % ensemble.size()).running()) {
                        victim = (leader + i) % ensemble.size();
                        break;
                    }
                }
                ensemble.isolate(victim);
                return ensemble.member(victim) + (victim == leader ? " (the leader)" : " (a follower)");
            }

            @Override
            public synchronized void healIsolation() {
                ensemble.heal();
            }
        });
    }

    @Override
    public void close() {
        ensemble.close();
    }

    @Override
    public String toString() {
        return "ZooKeeperClusterFixture{" + ensemble + "}";
    }
}
