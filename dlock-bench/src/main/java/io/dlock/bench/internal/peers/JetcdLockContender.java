package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.Contender;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lock.LockResponse;
import io.etcd.jetcd.support.CloseableClient;
import io.etcd.jetcd.support.Observers;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * jetcd's {@code Lock} client (etcd's server-side lock service), with a lease kept alive by
 * jetcd's keep-alive stream at the benchmark's lease time. A lease is one owner to etcd's lock
 * service (a second lock call with the same lease on a held name returns at once), so every
 * thread of a client takes its own lease.
 */
public final class JetcdLockContender implements Contender.OnOneServer {

    @Override
    public String name() {
        return "jetcd Lock";
    }

    @Override
    public Session connect(InetSocketAddress server, Duration lease) throws Exception {
        Client client = Client.builder().endpoints("http://" + server.getHostString() + ":" + server.getPort()).build();
        List<CloseableClient> keepAlives = new CopyOnWriteArrayList<>();
        long ttl = Math.max(2, lease.toSeconds());
        ThreadLocal<Long> leaseOfThread = ThreadLocal.withInitial(() -> {
            try {
                long id = client.getLeaseClient().grant(ttl).get(30, TimeUnit.SECONDS).getID();
                keepAlives.add(client.getLeaseClient().keepAlive(id, Observers.observer(r -> { })));
                return id;
            } catch (Exception e) {
                throw new IllegalStateException("could not grant an etcd lease", e);
            }
        });
        return new Session() {
            @Override
            public Held acquire(String key) throws Exception {
                LockResponse r = client.getLockClient()
                        .lock(ByteSequence.from("bench-jetcd/" + key, StandardCharsets.UTF_8), leaseOfThread.get())
                        .get(5, TimeUnit.MINUTES);
                ByteSequence held = r.getKey();
                return () -> client.getLockClient().unlock(held).get(30, TimeUnit.SECONDS);
            }

            @Override
            public void close() {
                keepAlives.forEach(CloseableClient::close);
                client.close();
            }
        };
    }
}
