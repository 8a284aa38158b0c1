package io.dlock.etcd.internal;

import io.dlock.spi.HeldLock;
import io.etcd.jetcd.ByteSequence;

/**
 * The backend's state of one held lock ({@link HeldLock#backendState()}): its key, the key's
 * create revision (the fencing token, and the guard of every later write), and its etcd lease.
 */
final class Grant {

    final String name;
    final ByteSequence key;
    final long revision;
    final EtcdLease lease;
    /** Whether the key is the client's reusable key of the name, which this grant holds until its key is gone. */
    final boolean sharedPath;
    /** The core's lease for this grant, once the core has shown it to the backend (renew, release). */
    volatile HeldLock held;

    Grant(String name, ByteSequence key, long revision, EtcdLease lease, boolean sharedPath) {
        this.name = name;
        this.key = key;
        this.revision = revision;
        this.lease = lease;
        this.sharedPath = sharedPath;
    }

    @Override
    public String toString() {
        return "Grant{" + name + ", revision " + revision + ", lease " + lease.hexId() + "}";
    }
}
