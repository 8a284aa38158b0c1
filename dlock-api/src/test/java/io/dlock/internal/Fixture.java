package io.dlock.internal;

import io.dlock.Lease;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * A client on the test constructor: a fake ticker, a manual scheduler that the test drives, a
 * same-thread worker unless told otherwise, a {@link FakeBackend} whose waits pass fake time
 * through the scheduler, and a recording listener.
 */
final class Fixture implements AutoCloseable {

    final FakeTicker ticker = new FakeTicker();
    final ManualScheduler scheduler = new ManualScheduler(ticker);
    final FakeBackend backend = new FakeBackend(ticker);
    final RecordingListener listener = new RecordingListener();
    final ExecutorService worker;
    final DefaultLockClient client;

    Fixture() {
        this(UnaryOperator.identity());
    }

    Fixture(UnaryOperator<LockClientConfig.Builder> config) {
        this(config, new DirectExecutorService());
    }

    Fixture(UnaryOperator<LockClientConfig.Builder> config, ExecutorService worker) {
        this.worker = worker;
        backend.sleeper = scheduler::advance;
        LockClientConfig cfg = config.apply(LockClientConfig.builder("fake://test")
                .ticker(ticker)
                .listener(listener)
                .retry(Duration.ofMillis(10), Duration.ofMillis(200))).build();
        client = new DefaultLockClient(cfg, FakeProvider.of(backend), scheduler, worker);
    }

    static LockOptions options(Duration lease, boolean autoRenew) {
        return LockOptions.builder().leaseTime(lease).autoRenew(autoRenew).build();
    }

    /** Acquires without waiting; fails the test if the lock is not granted. */
    DefaultLease<?> acquire(String name, LockOptions options) {
        Lease lease = client.lock(name, options).tryAcquire()
                .orElseThrow(() -> new AssertionError("expected a grant of " + name));
        return (DefaultLease<?>) lease;
    }

    DefaultLease<?> acquire(String name, Duration lease, boolean autoRenew) {
        return acquire(name, options(lease, autoRenew));
    }

    @Override
    public void close() throws InterruptedException {
        client.close();
        worker.shutdownNow();
        if (!worker.awaitTermination(10, TimeUnit.SECONDS)) {
            throw new AssertionError("test worker did not stop");
        }
    }

    /** Polls for another thread's progress (not for time the core decides), up to 10 s. */
    static void waitFor(String what, java.util.function.BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("not reached within 10 s: " + what);
            }
            Thread.sleep(1);
        }
    }
}
