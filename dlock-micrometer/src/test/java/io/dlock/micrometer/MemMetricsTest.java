package io.dlock.micrometer;

import static io.dlock.micrometer.MicrometerLockListener.ACQUIRE;
import static io.dlock.micrometer.MicrometerLockListener.HELD;
import static io.dlock.micrometer.MicrometerLockListener.HOLD;
import static io.dlock.micrometer.MicrometerLockListener.LOST;
import static io.dlock.micrometer.MicrometerLockListener.RENEWALS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.AcquireOutcome;
import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockListener;
import io.dlock.LockOptions;
import io.dlock.LostReason;
import io.dlock.spi.BackendContext;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import io.dlock.tck.mem.MemLockProvider;
import io.dlock.tck.mem.MemServer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The meters against the {@code mem://} reference provider: a real backend (it passes the TCK)
 * in this JVM, whose server can be paused and killed.
 */
class MemMetricsTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final String server = "metrics-" + UUID.randomUUID();

    @AfterEach
    void dropServer() {
        MemServer.drop(server);
    }

    private LockClient open(LockListener listener, String... query) {
        return LockClient.open(config(listener, query));
    }

    private LockClientConfig config(LockListener listener, String... query) {
        return LockClientConfig.builder("mem://" + server + (query.length > 0 ? "?" + String.join("&", query) : ""))
                .listener(listener)
                .operationTimeout(Duration.ofMillis(200))
                .retry(Duration.ofMillis(5), Duration.ofMillis(50))
                .build();
    }

    private static LockOptions lease(long millis) {
        return LockOptions.builder().leaseTime(Duration.ofMillis(millis)).build();
    }

    private double acquires(String outcome) {
        return registry.get(ACQUIRE).tags("backend", "mem", "outcome", outcome).timer().count();
    }

    private double held() {
        return registry.get(HELD).tags("backend", "mem").gauge().value();
    }

    private double renewals(String result) {
        return registry.get(RENEWALS).tags("backend", "mem", "result", result).counter().count();
    }

    private double lost(String reason) {
        return registry.get(LOST).tags("backend", "mem", "reason", reason).counter().count();
    }

    @Test
    void everyAcquireOutcomeIsCountedAndTimedAndHoldTimesAreRecorded() throws Exception {
        MicrometerLockListener metrics = MicrometerLockListener.create(registry);
        try (LockClient a = open(metrics); LockClient b = open(metrics, "link=b-" + server)) {
            Lease x = a.lock("x").tryAcquire().orElseThrow();
            assertEquals(1, acquires("acquired"));
            assertEquals(1, held());

            assertEquals(Optional.empty(), b.lock("x").tryAcquire());
            assertEquals(1, acquires("contended"));
            assertEquals(Optional.empty(), b.lock("x").tryAcquire(Duration.ofMillis(200)));
            assertEquals(1, acquires("timed_out"));
            double waited = registry.get(ACQUIRE).tags("outcome", "timed_out").timer().totalTime(TimeUnit.MILLISECONDS);
            assertTrue(waited >= 200, "a timed-out acquire is timed by its wait: " + waited + " ms");

            Thread.sleep(100);
            x.release();
            assertEquals(1, registry.get(HOLD).tags("backend", "mem").timer().count());
            double heldMs = registry.get(HOLD).timer().totalTime(TimeUnit.MILLISECONDS);
            assertTrue(heldMs >= 300, "held from the grant to the release: " + heldMs + " ms");
            assertEquals(0, held());

            // a waiter that gets the lock when its holder releases it: timed by its wait
            Lease y = a.lock("y").tryAcquire().orElseThrow();
            CompletableFuture<Optional<Lease>> waiter = b.lock("y").acquireAsync(Duration.ofSeconds(10));
            Thread.sleep(150);
            y.release();
            Lease handedOver = waiter.get(10, TimeUnit.SECONDS).orElseThrow();
            assertEquals(3, acquires("acquired"));
            assertEquals(1, held());
            handedOver.release();

            // cancelled and interrupted waits
            Lease z = a.lock("z").tryAcquire().orElseThrow();
            CompletableFuture<Optional<Lease>> cancelled = b.lock("z").acquireAsync(Duration.ofSeconds(30));
            Thread.sleep(50);
            cancelled.cancel(true);
            waitFor("the cancelled acquire reported", () -> acquires("cancelled") == 1);
            Thread waiting = new Thread(() -> {
                try {
                    b.lock("z").acquire();
                } catch (InterruptedException e) {
                    // expected
                }
            });
            waiting.start();
            Thread.sleep(50);
            waiting.interrupt();
            waiting.join(10_000);
            assertEquals(1, acquires("interrupted"));
            z.release();

            // a backend failure: b's link stops answering, the call fails after the operation timeout
            MemServer.named(server).link("b-" + server).orElseThrow().freeze();
            assertThrows(LockBackendException.class, () -> b.lock("w").tryAcquire());
            MemServer.named(server).link("b-" + server).orElseThrow().unfreeze();
            assertEquals(1, acquires("failed"));

            assertEquals(4, acquires("acquired"), "x, y, y handed over, z");
            assertEquals(1, acquires("contended"));
            assertEquals(1, acquires("timed_out"));
            assertEquals(4, registry.get(HOLD).timer().count(), "x, y, y handed over, z");
            assertEquals(0, held());
        }
    }

    @Test
    void renewalsAndLeasesLostByReasonAreCounted() throws Exception {
        MicrometerLockListener metrics = MicrometerLockListener.create(registry);
        MemServer mem = MemServer.named(server);
        try (LockClient client = open(metrics)) {
            // renewed every 100 ms
            Lease renewed = client.lock("renewed", lease(300)).tryAcquire().orElseThrow();
            waitFor("three renewals", () -> renewals("success") >= 3);
            assertTrue(renewed.isValid());
            renewed.release();
            assertEquals(0, renewals("failure"));

            // the server stops answering: renewals (due at 200 ms) fail after the operation timeout
            // (200 ms), and are retried until the lease expires
            Lease expiring = client.lock("expiring", lease(600)).tryAcquire().orElseThrow();
            assertEquals(1, held());
            mem.pause();
            waitFor("the lease expired", () -> !expiring.isValid());
            mem.resume();
            waitFor("the loss counted", () -> lost("expired") == 1);
            assertTrue(renewals("failure") >= 1, "renewal failures: " + renewals("failure"));
            assertEquals(0, held());

            // the server forgets every lock: the next renewal is answered "not the owner"
            Lease superseded = client.lock("superseded", lease(300)).tryAcquire().orElseThrow();
            mem.kill();
            mem.resume();
            waitFor("the lease superseded", () -> lost("superseded") == 1);
            assertFalse(superseded.isValid());
            assertEquals(0, held());
            assertEquals(0, lost("session_lost"));
            assertEquals(1, registry.get(HOLD).timer().count(), "lost leases have no hold time");
        }
    }

    @Test
    void lockNamesAreTaggedOnlyWhenAskedFor() throws Exception {
        try (LockClient plain = open(MicrometerLockListener.create(registry))) {
            plain.lock("order-1").tryAcquire().orElseThrow().release();
        }
        for (Meter m : registry.getMeters()) {
            assertNull(m.getId().getTag("lock"), m.getId().toString());
        }

        SimpleMeterRegistry tagged = new SimpleMeterRegistry();
        MicrometerLockListener byName = MicrometerLockListener.builder(tagged).tagLockNames(true).build();
        try (LockClient client = open(byName)) {
            Lease one = client.lock("order-1").tryAcquire().orElseThrow();
            client.lock("order-2").tryAcquire().orElseThrow().release();
            assertEquals(1, tagged.get(ACQUIRE).tags("backend", "mem", "lock", "order-1", "outcome", "acquired")
                    .timer().count());
            assertEquals(1, tagged.get(HELD).tags("lock", "order-1").gauge().value());
            assertEquals(0, tagged.get(HELD).tags("lock", "order-2").gauge().value());
            assertEquals(1, tagged.get(HOLD).tags("lock", "order-2").timer().count());
            one.release();
            assertEquals(0, tagged.get(HELD).tags("lock", "order-1").gauge().value());
        }
    }

    @Test
    void theBackendTagComesFromEachClientUnlessSet() {
        MicrometerLockListener shared = MicrometerLockListener.create(registry);
        // the same reference provider under another name stands for a second backend
        LockProvider other = new LockProvider() {
            private final MemLockProvider mem = new MemLockProvider();

            @Override
            public String name() {
                return "other";
            }

            @Override
            public Set<String> schemes() {
                return mem.schemes();
            }

            @Override
            public LockBackend open(BackendContext context) {
                return mem.open(context);
            }
        };
        try (LockClient memClient = open(shared); LockClient otherClient = LockClient.open(config(shared), other)) {
            memClient.lock("a").tryAcquire().orElseThrow();
            otherClient.lock("b").tryAcquire().orElseThrow();
            otherClient.lock("c").tryAcquire().orElseThrow();
            assertEquals(1, held());
            assertEquals(2, registry.get(HELD).tags("backend", "other").gauge().value());
        }
        assertEquals(0, held(), "close releases");
        assertEquals(0, registry.get(HELD).tags("backend", "other").gauge().value());
        assertTrue(registry.find(ACQUIRE).tags("backend", MicrometerLockListener.UNKNOWN_BACKEND).meters().isEmpty(),
                "no meters for the unbound listener");

        SimpleMeterRegistry fixedRegistry = new SimpleMeterRegistry();
        MicrometerLockListener fixed = MicrometerLockListener.builder(fixedRegistry).backend("primary")
                .tags(Tags.of("app", "payments")).build();
        assertSame(fixed, fixed.forClient("mem"));
        try (LockClient client = open(fixed)) {
            client.lock("a").tryAcquire().orElseThrow().release();
        }
        assertEquals(1, fixedRegistry.get(ACQUIRE).tags("backend", "primary", "app", "payments", "outcome", "acquired")
                .timer().count());
        assertTrue(fixedRegistry.find(ACQUIRE).tags("backend", "mem").meters().isEmpty());
    }

    @Test
    void listenersSharingARegistryShareTheHeldLocksGauge() {
        MicrometerLockListener first = MicrometerLockListener.create(registry);
        MicrometerLockListener second = MicrometerLockListener.create(registry);
        try (LockClient a = open(first); LockClient b = open(second)) {
            a.lock("a").tryAcquire().orElseThrow();
            b.lock("b").tryAcquire().orElseThrow();
            assertEquals(2, held());
        }
        assertEquals(0, held());
    }

    @Test
    void everyMeterIsThereAtZeroOnceABackendIsKnownAndEveryReasonHasItsTag() {
        LockListener bound = MicrometerLockListener.create(registry).forClient("mem");
        for (AcquireOutcome o : AcquireOutcome.values()) {
            assertEquals(0, acquires(o.name().toLowerCase(java.util.Locale.ROOT)));
        }
        assertEquals(0, renewals("success"));
        assertEquals(0, renewals("failure"));
        assertEquals(0, held());
        bound.acquireFinished("a", AcquireOutcome.ACQUIRED, Duration.ofMillis(3));
        bound.leaseLost("a", 7, LostReason.SESSION_LOST);
        assertEquals(1, lost("session_lost"));
        assertEquals(0, held());
    }

    @Test
    void badArgumentsAreRejectedWithTheirName() {
        assertEquals("registry must not be null",
                assertThrows(IllegalArgumentException.class, () -> MicrometerLockListener.create(null)).getMessage());
        MicrometerLockListener.Builder b = MicrometerLockListener.builder(registry);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> b.backend(" ")).getMessage().startsWith("backend"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> b.tags(List.of(io.micrometer.core.instrument.Tag
                .of("lock", "x")))).getMessage().contains("'lock'"));
    }

    static void waitFor(String what, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("not within 10 s: " + what);
            }
            Thread.sleep(5);
        }
    }
}
