package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.RequestCosts;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * What one request of each kind the etcd contenders send costs, one after another on one name,
 * through one jetcd client: the floor's put-if-absent and delete, dlock's put-if-absent that also
 * reads the name's two newest keys (its queue) in the same transaction and its delete guarded by
 * create revision, and jetcd's lock and unlock calls. Explains a latency ratio that differs from
 * the ratio of request counts.
 */
public final class EtcdRequestCost {

    private EtcdRequestCost() { }

    /**
     * @param server etcd
     * @param warmup time spent before measuring
     * @param measure time measured
     * @return the median time of each request kind, in µs, by name
     * @throws Exception if etcd fails
     */
    public static Map<String, Double> measure(InetSocketAddress server, Duration warmup, Duration measure) throws Exception {
        try (Client client = Client.builder().endpoints("http://" + server.getHostString() + ":" + server.getPort()).build()) {
            KV kv = client.getKVClient();
            long lease = client.getLeaseClient().grant(600).get(30, TimeUnit.SECONDS).getID();
            ByteSequence prefix = bytes("bench-cost/name/");
            ByteSequence key = bytes("bench-cost/name/owner");
            ByteSequence value = bytes("owner");
            PutOption withLease = PutOption.builder().withLeaseId(lease).build();
            GetOption newestTwo = GetOption.builder().isPrefix(true).withKeysOnly(true)
                    .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.DESCEND).withLimit(2).build();
            ByteSequence lockName = bytes("bench-cost-lock");
            long[] revision = new long[1];
            ByteSequence[] lockKey = new ByteSequence[1];
            Map<String, Callable<?>> requests = new LinkedHashMap<>();
            requests.put("txn: put if absent (floor)", () -> kv.txn().If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                    .Then(Op.put(key, value, withLease)).commit().get(30, TimeUnit.SECONDS));
            requests.put("delete (floor)", () -> kv.delete(key, DeleteOption.DEFAULT).get(30, TimeUnit.SECONDS));
            requests.put("txn: put if absent + read the queue (dlock)", () -> {
                revision[0] = kv.txn().If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                        .Then(Op.put(key, value, withLease), Op.get(prefix, newestTwo)).commit().get(30, TimeUnit.SECONDS)
                        .getGetResponses().get(0).getKvs().get(0).getCreateRevision();
                return null;
            });
            requests.put("txn: delete if created at the grant's revision (dlock)", () -> kv.txn()
                    .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision[0])))
                    .Then(Op.delete(key, DeleteOption.DEFAULT)).commit().get(30, TimeUnit.SECONDS));
            requests.put("lock (jetcd Lock)", () -> {
                lockKey[0] = client.getLockClient().lock(lockName, lease).get(30, TimeUnit.SECONDS).getKey();
                return null;
            });
            requests.put("unlock (jetcd Lock)", () -> client.getLockClient().unlock(lockKey[0]).get(30, TimeUnit.SECONDS));
            return RequestCosts.medians(requests, null, warmup, measure);
        }
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
