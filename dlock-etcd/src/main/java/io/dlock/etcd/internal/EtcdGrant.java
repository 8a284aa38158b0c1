package io.dlock.etcd.internal;

import io.etcd.jetcd.ByteSequence;
import java.util.List;

/**
 * The backend's state of one held lock (the {@code S} of {@code LockBackend<EtcdGrant>}, handed back
 * in {@link io.dlock.spi.Grant#state()}): its key, the key's create revision (the fencing token, and
 * the guard of every later write), its etcd lease, and the owner id it was requested with, which
 * names it when its etcd lease is gone.
 */
final class EtcdGrant {

    final String name;
    /** The owner id of the request: how the core knows the grant in {@code BackendEvents.leaseLost}. */
    final String ownerId;
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
    EtcdGrant(String name, String ownerId, ByteSequence key, long revision, EtcdLease lease, boolean sharedPath,
          List<ByteSequence> uncertainKeys) {
        this.name = name;
        this.ownerId = ownerId;
        this.key = key;
        this.revision = revision;
        this.lease = lease;
        this.sharedPath = sharedPath;
        this.uncertainKeys = uncertainKeys == null ? null : List.copyOf(uncertainKeys);
    }

    @Override
    public String toString() {
        return "EtcdGrant{" + name + ", revision " + revision + ", lease " + lease.hexId() + "}";
    }
}
