package io.dlock.etcd.internal;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import java.nio.charset.StandardCharsets;

/** The few etcd comparisons, operations and options the backend uses, named for what they do. */
final class EtcdOps {

    private EtcdOps() { }

    /** @return "the key does not exist" (its create revision is 0) */
    static Cmp absent(ByteSequence key) {
        return new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0));
    }

    /** @return "the key exists and was created at this revision": the owner check of every write */
    static Cmp createdAt(ByteSequence key, long revision) {
        return new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision));
    }

    /** @return "the key exists and holds this owner id": the owner check of a delete whose revision is unknown */
    static Cmp holds(ByteSequence key, String ownerId) {
        return new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(ByteSequence.from(ownerId, StandardCharsets.UTF_8)));
    }

    /**
     * @return "the lease's guard key was last written at this revision" (0: never): the condition
     *     under which a create may apply; see {@link EtcdLease#guardRevision()}
     */
    static Cmp guardAt(ByteSequence guard, long modRevision) {
        return new Cmp(guard, Cmp.Op.EQUAL, CmpTarget.modRevision(modRevision));
    }

    /** @return a write of the lease's guard key, attached to the lease: creates sent before it can no longer apply */
    static Op moveGuard(ByteSequence guard, long leaseId) {
        return Op.put(guard, ByteSequence.EMPTY, PutOption.builder().withLeaseId(leaseId).build());
    }

    /** @return a nested transaction that deletes a key if it holds the owner id */
    static Op deleteIfHolds(ByteSequence key, String ownerId) {
        return Op.txn(new Cmp[] {holds(key, ownerId)}, new Op[] {delete(key)}, new Op[0]);
    }

    /** @return a put of the owner id, attached to the lease */
    static Op putWithLease(ByteSequence key, String ownerId, long leaseId) {
        return Op.put(key, ByteSequence.from(ownerId, StandardCharsets.UTF_8),
                PutOption.builder().withLeaseId(leaseId).build());
    }

    /** @return the two newest keys of a name, newest first (right after a put: the own key and its predecessor) */
    static Op newestTwo(ByteSequence namePrefix) {
        return Op.get(namePrefix, GetOption.builder().isPrefix(true).withKeysOnly(true)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.DESCEND)
                .withLimit(2).build());
    }

    /** @return the newest key of a name created before {@code revision}: the immediate predecessor */
    static Op predecessor(ByteSequence namePrefix, long revision) {
        return Op.get(namePrefix, GetOption.builder().isPrefix(true).withKeysOnly(true)
                .withMaxCreateRevision(revision - 1)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.DESCEND)
                .withLimit(1).build());
    }

    /** @return the oldest key of a name, with its value: the holder */
    static Op oldest(ByteSequence namePrefix) {
        return Op.get(namePrefix, GetOption.builder().isPrefix(true)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND)
                .withLimit(1).build());
    }

    /** @return a read of one key */
    static Op get(ByteSequence key) {
        return Op.get(key, GetOption.DEFAULT);
    }

    /** @return a read of one key's revisions, without its value */
    static Op revisions(ByteSequence key) {
        return Op.get(key, GetOption.builder().withKeysOnly(true).build());
    }

    /** @return a delete of one key */
    static Op delete(ByteSequence key) {
        return Op.delete(key, DeleteOption.DEFAULT);
    }

    /** @return a watch of deletions from a revision on, cancelled by the server when it has no leader */
    static WatchOption deletesFrom(long revision) {
        return WatchOption.builder().withRevision(revision).withNoPut(true).withRequireLeader(true).build();
    }
}
