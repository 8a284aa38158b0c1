package io.dlock.zookeeper;

import io.dlock.spi.BackendContext;
import io.dlock.spi.LockBackend;
import io.dlock.spi.support.AbstractLockProvider;
import io.dlock.zookeeper.internal.ZkBackend;
import java.util.Set;

/**
 * The ZooKeeper provider, for URIs
 * {@code zookeeper://[user:password@]host[:port][,host[:port]...][/chroot][?sessionTimeout=PT30S&prefix=dlock]}
 * (alias {@code zk://}; the port defaults to 2181). Found by {@link java.util.ServiceLoader}; it can
 * also be passed to {@code LockClient} explicitly.
 *
 * <p>Locks are queues of ephemeral sequential nodes, granted in arrival order; the fencing token is
 * the winning node's creation zxid. A lease lives no longer than the client's ZooKeeper session:
 * lease times above the negotiated session timeout (default requested: 30 s) are rejected, and
 * every lease is reported lost as soon as the connection is suspended. With a user and password,
 * dlock authenticates with the {@code digest} scheme and protects the nodes it creates so that
 * other identities can read them but not delete them.
 *
 * <p>Stateless and thread-safe.
 */
public final class ZooKeeperLockProvider extends AbstractLockProvider {

    /** Creates the provider; {@link java.util.ServiceLoader} does this. */
    public ZooKeeperLockProvider() {
        super("zookeeper", Set.of("zookeeper", "zk"), null);
    }

    /**
     * Connects to the ensemble and waits, at most the operation timeout, for a session.
     *
     * @param context the client's context
     * @return the backend
     * @throws IllegalArgumentException if the URI is invalid, naming the part
     * @throws io.dlock.LockBackendException if no session could be established in time
     */
    @Override
    protected LockBackend<?> openBackend(BackendContext context) {
        return ZkBackend.open(context);
    }
}
