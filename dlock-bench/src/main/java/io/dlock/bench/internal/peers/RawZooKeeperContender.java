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
 * The floor on ZooKeeper: the least a correct lock can send with the plain ZooKeeper client.
 * Acquire creates an ephemeral node named after the lock, retried after 1 ms while it exists;
 * release deletes it. No queue, no waiting, no token.
 *
 * <p>With {@code async}, the same two requests go through the client's asynchronous API and are
 * awaited with a timeout, as a client that bounds every call must: the answer then reaches the
 * caller through the client's event thread, one thread hand-off more than the blocking API. Not a
 * lock anyone should use that way; it measures what that hand-off costs.
 */
public final class RawZooKeeperContender extends Floor implements Contender.OnOneServer {

    private final boolean async;

    /** @param async whether to use the asynchronous API (see the class comment) */
    public RawZooKeeperContender(boolean async) {
        this.async = async;
    }

    @Override
    public String name() {
        return async ? "raw ZooKeeper, async API" : "raw ZooKeeper (floor)";
    }

    @Override
    public Session connect(InetSocketAddress server, Duration lease) throws Exception {
        String parent = async ? "/bench-raw-async" : "/bench-raw";
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
            zk.create(parent, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        } catch (KeeperException.NodeExistsException e) {
            // made by an earlier client
        }
        byte[] owner = new byte[16];
        return new Session() {
            @Override
            public Held acquire(String key) throws Exception {
                String path = parent + "/" + key;
                while (!create(path)) {
                    Thread.sleep(1);
                }
                return () -> delete(path);
            }

            /** @return whether the node was created; false if it exists */
            private boolean create(String path) throws Exception {
                if (!async) {
                    try {
                        zk.create(path, owner, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
                        return true;
                    } catch (KeeperException.NodeExistsException e) {
                        return false;
                    }
                }
                CompletableFuture<Integer> created = new CompletableFuture<>();
                zk.create(path, owner, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL,
                        (rc, p, ctx, name) -> created.complete(rc), null);
                KeeperException.Code rc = KeeperException.Code.get(created.get(30, TimeUnit.SECONDS));
                if (rc == KeeperException.Code.OK || rc == KeeperException.Code.NODEEXISTS) {
                    return rc == KeeperException.Code.OK;
                }
                throw KeeperException.create(rc, path);
            }

            private void delete(String path) throws Exception {
                if (!async) {
                    zk.delete(path, -1);
                    return;
                }
                CompletableFuture<Integer> deleted = new CompletableFuture<>();
                zk.delete(path, -1, (rc, p, ctx) -> deleted.complete(rc), null);
                KeeperException.Code rc = KeeperException.Code.get(deleted.get(30, TimeUnit.SECONDS));
                if (rc != KeeperException.Code.OK) {
                    throw KeeperException.create(rc, path);
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
