package io.dlock.zookeeper.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LostReason;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.BackendUri;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import io.dlock.zookeeper.ZooKeeperLockProvider;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;

/** Helpers for tests that drive the backend directly or need to reach inside a client. */
final class Harness {

    static final Duration OP_TIMEOUT = Duration.ofSeconds(1);
    static final Duration SESSION = Duration.ofSeconds(3);
    static final Duration LEASE = Duration.ofSeconds(2);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final AtomicInteger THREADS = new AtomicInteger();
    private static final AtomicInteger NAMES = new AtomicInteger();

    private Harness() { }

    /** Records what a backend reports on its own. */
    static final class Events implements BackendEvents {
        final List<LostReason> all = new CopyOnWriteArrayList<>();
        /** The owner ids of grants reported lost one by one. */
        final List<String> one = new CopyOnWriteArrayList<>();

        @Override
        public void allLeasesLost(LostReason reason) {
            all.add(reason);
        }

        @Override
        public void leaseLost(String ownerId, LostReason reason) {
            one.add(ownerId);
        }
    }

    static String uri(int port, String userInfo, String extra) {
        return "zookeeper://" + (userInfo == null ? "" : userInfo + "@") + "127.0.0.1:" + port
                + "?sessionTimeout=" + SESSION + (extra == null ? "" : "&" + extra);
    }

    static ZkBackend open(String uri, Events events) {
        LockClientConfig config = LockClientConfig.builder(uri).operationTimeout(OP_TIMEOUT).build();
        return ZkBackend.open(new BackendContext(config, BackendUri.parse(uri), r -> {
            Thread t = new Thread(r, "test-zk-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        }, events));
    }

    static String newOwner() {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    static String name(String label) {
        return label + "-" + NAMES.incrementAndGet() + "-" + System.nanoTime();
    }

    /** Acquires through the SPI as the core would, waiting at most {@code maxWait}; null if not granted. */
    static Grant<ZkGrant> acquire(LockBackend<ZkGrant> b, String name, Duration maxWait) throws InterruptedException {
        String owner = newOwner();
        AcquireRequest request = new AcquireRequest(name, owner, LEASE);
        AcquireAttempt<ZkGrant> attempt = b.newAttempt(request);
        long deadline = System.nanoTime() + maxWait.toNanos();
        boolean granted = false;
        try {
            while (true) {
                AttemptResult<ZkGrant> r = attempt.tryOnce();
                if (r instanceof AttemptResult.Granted<ZkGrant> g) {
                    granted = true;
                    return Grant.of(request, g);
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                io.dlock.tck.SpiAnswers.awaitTurn(attempt, Duration.ofNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(250))));
            }
        } finally {
            if (!granted) {
                attempt.abandon();
            }
        }
    }

    /** A plain Curator client, for looking at and tampering with the nodes; digest "user:password" or null. */
    static CuratorFramework raw(int port, String digest) throws InterruptedException {
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder()
                .connectString("127.0.0.1:" + port)
                .sessionTimeoutMs((int) SESSION.toMillis())
                .connectionTimeoutMs(5000)
                .retryPolicy(new RetryOneTime(100));
        if (digest != null) {
            b.authorization("digest", digest.getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework cf = b.build();
        cf.start();
        assertTrue(cf.blockUntilConnected(10, TimeUnit.SECONDS), "raw client connected");
        return cf;
    }

    /** A provider that hands out the backend it opens, to reach the session of a full client. */
    static final class Capturing implements LockProvider {
        final AtomicReference<ZkBackend> backend = new AtomicReference<>();

        @Override
        public String name() {
            return "zookeeper";
        }

        @Override
        public Set<String> schemes() {
            return new ZooKeeperLockProvider().schemes();
        }

        @Override
        public LockBackend open(BackendContext context) {
            ZkBackend b = ZkBackend.open(context);
            backend.set(b);
            return b;
        }
    }

    static LockClient client(String uri) {
        return LockClient.open(LockClientConfig.builder(uri).operationTimeout(OP_TIMEOUT)
                .defaultLockOptions(io.dlock.LockOptions.builder().leaseTime(LEASE).build())
                .retry(Duration.ofMillis(10), Duration.ofMillis(250)).build());
    }

    static LockClient client(String uri, Capturing provider) {
        return LockClient.open(LockClientConfig.builder(uri).operationTimeout(OP_TIMEOUT)
                .defaultLockOptions(io.dlock.LockOptions.builder().leaseTime(LEASE).build())
                .retry(Duration.ofMillis(10), Duration.ofMillis(250)).build(), provider);
    }

    /** Polls every 10 ms until the condition holds or the timeout passes. */
    static boolean eventually(BooleanSupplier condition, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() - deadline < 0) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(10);
        }
        return condition.getAsBoolean();
    }
}
