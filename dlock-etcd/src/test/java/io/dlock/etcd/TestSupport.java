package io.dlock.etcd;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.dlock.LockClientConfig;
import io.dlock.LostReason;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.BackendUri;
import io.dlock.etcd.internal.EtcdLockBackend;
import io.dlock.spi.LockBackend;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.function.Executable;

/** Helpers shared by the etcd tests. */
final class TestSupport {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final AtomicInteger THREADS = new AtomicInteger();
    private static final AtomicInteger NAMES = new AtomicInteger();

    private TestSupport() { }

    /** Records what a backend reports by itself. */
    static final class RecordingEvents implements BackendEvents {
        final List<String> events = new CopyOnWriteArrayList<>();

        @Override
        public void allLeasesLost(LostReason reason) {
            events.add("all:" + reason);
        }

        @Override
        public void leaseLost(String ownerId, LostReason reason) {
            events.add(ownerId + ":" + reason);
        }
    }

    static String ownerId() {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /** @return a lock name no other test uses */
    static String name(String what) {
        return "test-" + what + "-" + NAMES.incrementAndGet() + "-" + System.nanoTime();
    }

    static AcquireRequest request(String name, Duration lease) {
        return new AcquireRequest(name, ownerId(), lease);
    }

    /** Opens the backend through the SPI, as the core does, with daemon threads named test-etcd-N. */
    static EtcdLockBackend openBackend(String uri, Duration operationTimeout, BackendEvents events) {
        LockClientConfig config = LockClientConfig.builder(uri).operationTimeout(operationTimeout).build();
        ThreadFactory threads = r -> {
            Thread t = new Thread(r, "test-etcd-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        // the backend class itself, not the provider's LockBackend<?>: a test knows its state type
        return EtcdLockBackend.open(new BackendContext(config, BackendUri.parse(uri), threads, events), null);
    }

    /**
     * Returns a plain jetcd client, to look at and tamper with what the backend wrote. It has made
     * one request already: the first jetcd request of a JVM loads and initialises gRPC, Netty and
     * Vert.x, which can take longer than the 1 s operation timeout the tests give the backend.
     *
     * @param cluster the servers
     * @return the client
     */
    static Client admin(EtcdCluster cluster) {
        Client c = Client.builder().endpoints(cluster.addresses().stream()
                .map(a -> "http://" + a.getHostString() + ":" + a.getPort()).toArray(String[]::new)).build();
        try {
            c.getKVClient().get(ByteSequence.from("warm-up", StandardCharsets.UTF_8)).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            c.close();
            throw new AssertionError("etcd at " + cluster + " does not answer", e);
        }
        return c;
    }

    /** @return the keys of one lock name under the default prefix, oldest first */
    static List<KeyValue> keysOf(Client admin, String lockName) {
        ByteSequence prefix = ByteSequence.from("dlock/locks/" + io.dlock.etcd.internal.KeysAccess.encode(lockName) + "/",
                StandardCharsets.UTF_8);
        try {
            return admin.getKVClient().get(prefix, GetOption.builder().isPrefix(true)
                    .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).build())
                    .get(10, TimeUnit.SECONDS).getKvs();
        } catch (Exception e) {
            throw new AssertionError("reading the keys of '" + lockName + "' failed", e);
        }
    }

    static String utf8(ByteSequence b) {
        return b.toString(StandardCharsets.UTF_8);
    }
}
