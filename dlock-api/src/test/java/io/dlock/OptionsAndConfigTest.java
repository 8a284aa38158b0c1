package io.dlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.internal.FakeBackend;
import io.dlock.internal.FakeProvider;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** TCK rule V1 for lease times and waits, and the configuration objects. */
class OptionsAndConfigTest {

    private static void rejectedNaming(String parameter, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().startsWith(parameter + " "), "the message names '" + parameter + "': " + e.getMessage());
    }

    @Test
    void defaults() {
        LockOptions o = LockOptions.defaults();
        assertEquals(Duration.ofSeconds(30), o.leaseTime());
        assertEquals(Duration.ofSeconds(10), o.renewInterval());
        assertTrue(o.autoRenew());
        assertEquals(o, LockOptions.builder().build());
        assertEquals(o.hashCode(), LockOptions.builder().build().hashCode());
    }

    @Test
    void badLeaseTimesAreRejected() {
        rejectedNaming("leaseTime", () -> LockOptions.builder().leaseTime(null));
        rejectedNaming("leaseTime", () -> LockOptions.builder().leaseTime(Duration.ZERO));
        rejectedNaming("leaseTime", () -> LockOptions.builder().leaseTime(Duration.ofMillis(-5)));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LockOptions.builder().leaseTime(Duration.ofMillis(-5)));
        assertTrue(e.getMessage().contains("PT-0.005S"), "the message shows the value: " + e.getMessage());
    }

    @Test
    void badRenewIntervalsAreRejected() {
        rejectedNaming("renewInterval", () -> LockOptions.builder().renewInterval(null));
        rejectedNaming("renewInterval", () -> LockOptions.builder().renewInterval(Duration.ZERO));
        rejectedNaming("renewInterval", () -> LockOptions.builder().renewInterval(Duration.ofSeconds(-1)));
        rejectedNaming("renewInterval", () -> LockOptions.builder()
                .leaseTime(Duration.ofSeconds(10)).renewInterval(Duration.ofSeconds(5)).build());
        rejectedNaming("renewInterval", () -> LockOptions.builder()
                .leaseTime(Duration.ofSeconds(10)).renewInterval(Duration.ofSeconds(7)).build());
        LockOptions ok = LockOptions.builder().leaseTime(Duration.ofSeconds(10))
                .renewInterval(Duration.ofMillis(4999)).build();
        assertEquals(Duration.ofMillis(4999), ok.renewInterval());
    }

    @Test
    void theDefaultRenewIntervalFollowsTheLeaseTime() {
        assertEquals(Duration.ofSeconds(1),
                LockOptions.builder().leaseTime(Duration.ofSeconds(3)).build().renewInterval());
    }

    @Test
    void toBuilderKeepsADerivedRenewIntervalDerived() {
        // the default renew interval is a third of the lease time; changing the lease time of a
        // copy must not keep the old lease time's interval (which may even be invalid now)
        LockOptions shorter = LockOptions.defaults().toBuilder().leaseTime(Duration.ofSeconds(3)).build();
        assertEquals(Duration.ofSeconds(1), shorter.renewInterval());
        LockOptions longer = LockOptions.defaults().toBuilder().leaseTime(Duration.ofSeconds(90)).build();
        assertEquals(Duration.ofSeconds(30), longer.renewInterval());
        // an explicit interval is kept
        LockOptions explicit = LockOptions.builder().renewInterval(Duration.ofSeconds(2)).build();
        assertEquals(Duration.ofSeconds(2), explicit.toBuilder().leaseTime(Duration.ofSeconds(60)).build().renewInterval());
        assertEquals(explicit, explicit.toBuilder().build());
        assertFalse(explicit.toBuilder().autoRenew(false).build().autoRenew());
    }

    @Test
    void configValidation() {
        rejectedNaming("uri", () -> LockClientConfig.builder(null));
        rejectedNaming("uri", () -> LockClientConfig.builder("  "));
        LockClientConfig.Builder b = LockClientConfig.builder("fake://x");
        rejectedNaming("uri", () -> b.uri(null));
        rejectedNaming("operationTimeout", () -> b.operationTimeout(null));
        rejectedNaming("operationTimeout", () -> b.operationTimeout(Duration.ZERO));
        rejectedNaming("operationTimeout", () -> b.operationTimeout(Duration.ofSeconds(-1)));
        rejectedNaming("defaultLockOptions", () -> b.defaultLockOptions(null));
        rejectedNaming("listener", () -> b.listener(null));
        rejectedNaming("ticker", () -> b.ticker(null));
        rejectedNaming("clock", () -> b.clock(null));
        rejectedNaming("base", () -> b.retry(null, Duration.ofSeconds(1)));
        rejectedNaming("base", () -> b.retry(Duration.ZERO, Duration.ofSeconds(1)));
        rejectedNaming("cap", () -> b.retry(Duration.ofMillis(1), Duration.ofSeconds(-1)));
        rejectedNaming("cap", () -> b.retry(Duration.ofSeconds(2), Duration.ofSeconds(1)));
        rejectedNaming("config", () -> LockClient.open((LockClientConfig) null));
        rejectedNaming("config", () -> LockClient.open(null, new FakeProvider()));
        rejectedNaming("provider", () -> LockClient.open(LockClientConfig.builder("fake://x").build(), null));
        rejectedNaming("executor", () -> b.executor(null));
        rejectedNaming("scheduler", () -> b.scheduler(null));
        java.util.concurrent.ExecutorService stopped = java.util.concurrent.Executors.newSingleThreadExecutor();
        stopped.shutdown();
        rejectedNaming("executor", () -> b.executor(stopped));
        java.util.concurrent.ScheduledExecutorService stoppedTimer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        stoppedTimer.shutdown();
        rejectedNaming("scheduler", () -> b.scheduler(stoppedTimer));
    }

    @Test
    void theApplicationsExecutorAndSchedulerAreKeptAndCopied() {
        LockClientConfig plain = LockClientConfig.builder("fake://x").build();
        assertTrue(plain.executor().isEmpty(), "the client's own pools by default");
        assertTrue(plain.scheduler().isEmpty(), "the client's own timer by default");
        java.util.concurrent.Executor executor = Runnable::run;
        java.util.concurrent.ScheduledExecutorService scheduler = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try {
            LockClientConfig c = plain.toBuilder().executor(executor).scheduler(scheduler).build();
            assertEquals(executor, c.executor().orElseThrow());
            assertEquals(scheduler, c.scheduler().orElseThrow());
            assertEquals(c, c.toBuilder().build());
            assertNotEquals(plain, c);
        } finally {
            scheduler.shutdownNow();
        }
    }

    @Test
    void configDefaultsAndCopies() {
        LockClientConfig c = LockClientConfig.builder(" fake://x ").build();
        assertEquals("fake://x", c.uri());
        assertEquals(Duration.ofSeconds(5), c.operationTimeout());
        assertEquals(LockOptions.defaults(), c.defaultLockOptions());
        assertEquals(c, c.toBuilder().build());
        assertEquals(c.hashCode(), c.toBuilder().build().hashCode());
        assertNotEquals(c, c.toBuilder().operationTimeout(Duration.ofSeconds(1)).build());
    }

    @Test
    void theConfigsToStringNeverShowsThePassword() {
        LockClientConfig c = LockClientConfig.builder("redis://app:s3cr%40t-pw@cache:6379/0?token=tok-123").build();
        String s = c.toString();
        assertFalse(s.contains("s3cr"), s);
        assertFalse(s.contains("tok-123"), s);
        assertFalse(s.contains("app:"), s);
        assertTrue(s.contains("redis://***:***@cache:6379"), s);
    }

    @Test
    void leaseTimesOutsideWhatTheBackendSupportsAreRejected() {
        FakeBackend backend = new FakeBackend(Ticker.system());
        backend.minimumLeaseTime = Duration.ofSeconds(2);
        backend.maximumLeaseTime = Duration.ofSeconds(40);
        try (LockClient client = LockClient.open(LockClientConfig.builder("fake://x").build(), FakeProvider.of(backend))) {
            IllegalArgumentException low = assertThrows(IllegalArgumentException.class, () -> client.lock("a",
                    LockOptions.builder().leaseTime(Duration.ofSeconds(1)).build()));
            assertTrue(low.getMessage().startsWith("leaseTime") && low.getMessage().contains("PT2S")
                    && low.getMessage().contains("PT1S") && low.getMessage().contains("fake"), low.getMessage());
            IllegalArgumentException high = assertThrows(IllegalArgumentException.class, () -> client.lock("a",
                    LockOptions.builder().leaseTime(Duration.ofSeconds(41)).build()));
            assertTrue(high.getMessage().startsWith("leaseTime") && high.getMessage().contains("PT40S"), high.getMessage());
            // the bounds themselves are fine
            client.lock("a", LockOptions.builder().leaseTime(Duration.ofSeconds(2)).build());
            client.lock("a", LockOptions.builder().leaseTime(Duration.ofSeconds(40)).build());
            // the default (30 s) is within bounds
            client.lock("a");
            rejectedNaming("options", () -> client.lock("a", null));
            rejectedNaming("name", () -> client.lock("", LockOptions.defaults()));
            rejectedNaming("name", () -> client.lock(null));
            assertEquals(0, backend.tryOnceCalls.get(), "creating handles does no I/O");
        }
    }

    @Test
    void holderQueryNeedsTheCapability() {
        FakeBackend backend = new FakeBackend(Ticker.system());
        try (LockClient client = LockClient.open(LockClientConfig.builder("fake://x").build(), FakeProvider.of(backend))) {
            assertThrows(UnsupportedOperationException.class, () -> client.holder("a"));
            assertFalse(client.capabilities().contains(Capability.HOLDER_QUERY));
            assertTrue(client.capabilities().contains(Capability.FENCING));
            assertThrows(UnsupportedOperationException.class, () -> client.capabilities().add(Capability.FAIR));
        }
        FakeBackend withHolder = new FakeBackend(Ticker.system());
        withHolder.capabilities = java.util.EnumSet.of(Capability.FENCING, Capability.HOLDER_QUERY);
        try (LockClient client = LockClient.open(LockClientConfig.builder("fake://x").build(), FakeProvider.of(withHolder))) {
            assertTrue(client.holder("a").isEmpty());
            Lease lease = client.lock("a").tryAcquire().orElseThrow();
            LockHolder h = client.holder("a").orElseThrow();
            assertEquals(lease.ownerId(), h.ownerId());
            assertEquals(lease.fencingToken(), h.fencingToken());
            rejectedNaming("name", () -> client.holder("bad\u0000name"));
        }
    }
}
