package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.Contender;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.PutOption;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The floor on etcd: the least a correct lock can send with jetcd's KV client. Acquire is one
 * transaction, "if the key does not exist, put it with the lease", retried after 1 ms while
 * taken; release deletes the key. One lease per client with a ten-minute TTL that is never
 * renewed (a benchmark run is shorter), no waiting, no queue.
 */
public final class RawEtcdContender extends Floor implements Contender.OnOneServer {

    @Override
    public String name() {
        return "raw jetcd KV (floor)";
    }

    @Override
    public Session connect(InetSocketAddress server, Duration lease) throws Exception {
        Client client = Client.builder().endpoints("http://" + server.getHostString() + ":" + server.getPort()).build();
        KV kv = client.getKVClient();
        long leaseId = client.getLeaseClient().grant(600).get(30, TimeUnit.SECONDS).getID();
        ByteSequence value = ByteSequence.from("owner", StandardCharsets.UTF_8);
        PutOption withLease = PutOption.builder().withLeaseId(leaseId).build();
        return new Session() {
            @Override
            public Held acquire(String key) throws Exception {
                ByteSequence k = ByteSequence.from("bench-raw/" + key, StandardCharsets.UTF_8);
                while (!kv.txn()
                        .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                        .Then(Op.put(k, value, withLease))
                        .commit().get(30, TimeUnit.SECONDS).isSucceeded()) {
                    Thread.sleep(1);
                }
                return () -> kv.delete(k, DeleteOption.DEFAULT).get(30, TimeUnit.SECONDS);
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }
}
