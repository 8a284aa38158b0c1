package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.Contender;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * The floor's two requests (create an ephemeral node, delete it) sent with the ZooKeeper
 * client's asynchronous API and awaited with a timeout, as a client that bounds every call must:
 * the answer then reaches the caller through the client's event thread, one thread hand-off more
 * than the blocking API. Not a lock anyone should use; it measures what that hand-off costs.
 */
public final class RawZooKeeperAsyncContender implements Contender {

    private static final String PARENT = "/bench-raw-async";

    @Override
    public String name() {
        return "raw ZooKeeper, async API";
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
                    CompletableFuture<Integer> created = new CompletableFuture<>();
                    zk.create(path, owner, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL,
                            (rc, p, ctx, name) -> created.complete(rc), null);
                    int rc = created.get(30, TimeUnit.SECONDS);
                    if (rc == KeeperException.Code.OK.intValue()) {
                        return () -> {
                            CompletableFuture<Integer> deleted = new CompletableFuture<>();
                            zk.delete(path, -1, (drc, p, ctx) -> deleted.complete(drc), null);
                            int d = deleted.get(30, TimeUnit.SECONDS);
                            if (d != KeeperException.Code.OK.intValue()) {
                                throw KeeperException.create(KeeperException.Code.get(d), path);
                            }
                        };
                    }
                    if (rc != KeeperException.Code.NODEEXISTS.intValue()) {
                        throw KeeperException.create(KeeperException.Code.get(rc), path);
                    }
                    Thread.sleep(1);
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
