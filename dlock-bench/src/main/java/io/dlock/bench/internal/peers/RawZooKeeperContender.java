package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.Contender;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * The floor on ZooKeeper: the least a correct lock can send with the plain ZooKeeper client.
 * Acquire creates an ephemeral node named after the lock, retried after 1 ms while it exists;
 * release deletes it. No queue, no waiting, no token.
 */
public final class RawZooKeeperContender implements Contender {

    private static final String PARENT = "/bench-raw";

    @Override
    public String name() {
        return "raw ZooKeeper (floor)";
    }

    @Override
    public boolean waits() {
        return false;
    }

    @Override
    public boolean renews() {
        return false;
    }

    @Override
    public Session connect(InetSocketAddress server, Duration lease) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(server.getHostString() + ":" + server.getPort(), (int) lease.toMillis(), e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        if (!connected.await(30, TimeUnit.SECONDS)) {
            zk.close();
            throw new IllegalStateException("ZooKeeper did not connect to " + server + " in 30 s");
        }
        try {
            zk.create(PARENT, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        } catch (KeeperException.NodeExistsException e) {
            // made by an earlier client
        }
        byte[] owner = new byte[16];
        return new Session() {
            @Override
            public Held acquire(String key) throws Exception {
                String path = PARENT + "/" + key;
                while (true) {
                    try {
                        zk.create(path, owner, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
                        return () -> zk.delete(path, -1);
                    } catch (KeeperException.NodeExistsException e) {
                        Thread.sleep(1);
                    }
                }
            }

            @Override
            public void close() {
                try {
                    zk.close();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
    }
}
