package io.dlock.zookeeper.internal;

import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * What the backend keeps for a granted lock ({@code Grant.state()} of the typed SPI, {@code LockBackend<ZkGrant>}): the lock node, its
 * creation zxid (the fencing token) and the connection epoch the grant was made in.
 *
 * <p>It is also the watcher on its own node, set by the first renewal of the grant: a deletion of
 * the node by anyone but a release of ours (an administrator, or another client where the nodes
 * are not protected by credentials) marks the grant {@link #gone}, and the next renewal reports it
 * not renewed, without reading the node again.
 */
final class ZkGrant implements Watcher {

    final String name;
    final String path;
    final long czxid;
    final long epoch;
    /** A watch on the node is registered (set once its registering read answered OK). */
    volatile boolean watched;
    /** The watch saw the node deleted. */
    volatile boolean gone;

    ZkGrant(String name, String path, long czxid, long epoch) {
        this.name = name;
        this.path = path;
        this.czxid = czxid;
        this.epoch = epoch;
    }

    /** Runs on ZooKeeper's event thread, before the answer to any request the server ran after the deletion. */
    @Override
    public void process(WatchedEvent event) {
        if (event.getType() == Event.EventType.NodeDeleted) {
            gone = true;
        }
    }

    @Override
    public String toString() {
        return "ZkGrant{" + path + ", czxid=" + czxid + ", epoch=" + epoch + (gone ? ", gone" : "") + "}";
    }
}
