package io.dlock.zookeeper.internal;

/**
 * What the backend keeps for a granted lock ({@code HeldLock.backendState()}): the lock node, its
 * creation zxid (the fencing token) and the connection epoch the grant was made in.
 */
final class ZkGrant {

    final String name;
    final String path;
    final long czxid;
    final long epoch;

    ZkGrant(String name, String path, long czxid, long epoch) {
        this.name = name;
        this.path = path;
        this.czxid = czxid;
        this.epoch = epoch;
    }

    @Override
    public String toString() {
        return "ZkGrant{" + path + ", czxid=" + czxid + ", epoch=" + epoch + "}";
    }
}
