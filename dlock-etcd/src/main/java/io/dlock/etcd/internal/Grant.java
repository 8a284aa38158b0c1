package io.dlock.etcd.internal;

import io.dlock.spi.HeldLock;
import io.etcd.jetcd.ByteSequence;
import java.util.List;

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
    /**
     * The keys a create of this acquisition may still make later (a copy of its create was sent
     * and not answered), which the release must guard against (see {@link EtcdLease#guardRevision()});
     * null if there is no such copy.
     */
    final List<ByteSequence> uncertainKeys;
    /** The core's lease for this grant, once the core has shown it to the backend (renew, release). */
    volatile HeldLock held;

    Grant(String name, ByteSequence key, long revision, EtcdLease lease, boolean sharedPath,
          List<ByteSequence> uncertainKeys) {
        this.name = name;
        this.key = key;
        this.revision = revision;
        this.lease = lease;
        this.sharedPath = sharedPath;
        this.uncertainKeys = uncertainKeys == null ? null : List.copyOf(uncertainKeys);
    }

    @Override
    public String toString() {
        return "Grant{" + name + ", revision " + revision + ", lease " + lease.hexId() + "}";
    }
}
