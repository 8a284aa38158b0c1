package io.dlock.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockLostException;
import io.dlock.LockOptions;
import io.dlock.LostReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/** The server process crashes, restarts or stalls (SIGKILL, SIGSTOP): leases end, clients recover. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ZooKeeperServerFaultTest {

    private ZkProcess server;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @BeforeAll
    void start() {
        server = ZkProcess.start();
    }

    @AfterEach
    void closeClients() throws Exception {
        Collections.reverse(toClose);
        for (AutoCloseable c : toClose) {
            c.close();
        }
        toClose.clear();
    }

    @AfterAll
    void stop() {
        server.close();
    }

    private LockClient client() {
        LockClient c = LockClient.open(LockClientConfig.builder("zk://127.0.0.1:" + server.port() + "?sessionTimeout=PT3S")
                .operationTimeout(Duration.ofSeconds(1))
                .defaultLockOptions(LockOptions.builder().leaseTime(Duration.ofSeconds(2)).build())
                .retry(Duration.ofMillis(10), Duration.ofMillis(250))
                .build());
        toClose.add(c);
        return c;
    }

    /**
     * Acquires, retrying while the client is still reconnecting: an acquire that finds no connection
     * fails fast with LockBackendException, by contract, rather than waiting out the outage.
     */
    private static Lease acquireWhenBack(LockClient c, String name, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            try {
                Optional<Lease> l = c.lock(name).tryAcquire(Duration.ofSeconds(2));
                if (l.isPresent()) {
                    return l.get();
                }
            } catch (LockBackendException e) {
                if (System.nanoTime() - deadline > 0) {
                    throw e;
                }
                Thread.sleep(100);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("no grant within " + within);
            }
        }
    }

    @Test
    void aCrashEndsEveryLeaseAndClientsRecoverAfterTheRestart() throws Exception {
        LockClient a = client();
        LockClient b = client();
        String name = "crash-" + System.nanoTime();
        Lease lease = a.lock(name).tryAcquire().orElseThrow();
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        lease.onLost(lost::complete);
        server.kill();
        // generous: the client sees the connection close at once; 5 s covers a loaded machine
        assertEquals(LostReason.SESSION_LOST, lost.get(5, TimeUnit.SECONDS).reason());
        server.restart();
        // generous: reconnection backs off up to a second between attempts
        Lease next = acquireWhenBack(b, name, Duration.ofSeconds(20));
        assertTrue(next.fencingToken() > lease.fencingToken(), "tokens keep increasing across the restart");
        next.release();
        Lease again = acquireWhenBack(a, name, Duration.ofSeconds(20));
        assertTrue(again.fencingToken() > next.fencingToken());
        again.release();
    }

    @Test
    void aStalledServerEndsTheLeaseBeforeItCanHandTheLockOn() throws Exception {
        LockClient a = client();
        LockClient b = client();
        String name = "stall-" + System.nanoTime();
        Lease lease = a.lock(name).tryAcquire().orElseThrow();
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        lease.onLost(lost::complete);
        server.pause();
        try {
            // the lease ends on the holder's clock (2 s) or when its connection is suspended (2 s without answers)
            LockLostException e = lost.get(10, TimeUnit.SECONDS);
            assertFalse(lease.isValid(), e.toString());
        } finally {
            server.resume();
        }
        Lease next = acquireWhenBack(b, name, Duration.ofSeconds(20));
        assertTrue(next.fencingToken() > lease.fencingToken(), "after the stall the lock is free again, with a larger token");
        next.release();
    }
}
