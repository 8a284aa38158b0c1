package io.dlock.tck;

import io.dlock.spi.support.Arguments;
import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Clients contending for one lock while a test injects faults, for backend tests: one thread per
 * client re-acquires with short waits (so that most waits time out and are abandoned, which is what
 * strands keys when a backend gets it wrong), holds for a few random milliseconds drawn from a
 * seed, and records proven holds in a {@link HoldLog}. Backend failures are counted, not fatal;
 * anything else a contender throws fails {@link #stop()}. Threads: one per client.
 */
public final class Contention {

    private final HoldLog log = new HoldLog();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicInteger grants = new AtomicInteger();
    private final AtomicInteger backendErrors = new AtomicInteger();
    private final AtomicInteger timeouts = new AtomicInteger();
    private final AtomicLong faultsEnded = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong firstGrantAfterFaults = new AtomicLong();
    private final List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
    private final List<Thread> threads = new ArrayList<>();

    private Contention() { }

    /**
     * Starts one contender per client on the lock.
     *
     * @param clients the clients, each used by one thread
     * @param name the lock
     * @param wait each acquire's wait; short, so that waits time out and are abandoned
     * @param seed the seed of the hold times
     * @return the running contention
     * @throws IllegalArgumentException if an argument is null or {@code clients} is empty
     */
    public static Contention start(List<LockClient> clients, String name, Duration wait, long seed) {
        Arguments.notNull("clients", clients);
        Arguments.notNull("name", name);
        Arguments.notNull("wait", wait);
        if (clients == null || clients.isEmpty() || name == null || wait == null) {
            throw new IllegalArgumentException((clients == null || clients.isEmpty() ? "clients" : name == null ? "name"
                    : "wait") + " must be given");
        }
        Contention c = new Contention();
        SplittableRandom root = new SplittableRandom(seed);
        for (int t = 0; t < clients.size(); t++) {
            c.begin(clients.get(t), "client " + t, name, wait, root.split(), t);
        }
        return c;
    }

    private void begin(LockClient client, String who, String name, Duration wait, SplittableRandom random, int index) {
        Thread thread = new Thread(() -> {
            while (!stop.get()) {
                Optional<Lease> lease;
                try {
                    lease = client.lock(name).tryAcquire(wait);
                } catch (LockBackendException e) {
                    backendErrors.incrementAndGet(); // allowed while a fault lasts: a failure, never a false grant
                    TestTiming.sleep(20);
                    continue;
                } catch (Throwable e) {
                    failures.add(e);
                    return;
                }
                if (lease.isEmpty()) {
                    timeouts.incrementAndGet();
                    continue;
                }
                try (Lease l = lease.get()) {
                    long in = log.enter(l);
                    if (in - faultsEnded.get() > 0) {
                        firstGrantAfterFaults.compareAndSet(0, in);
                    }
                    grants.incrementAndGet();
                    TestTiming.sleep(random.nextInt(10, 40));
                    log.exit(who, l, in);
                } catch (Throwable e) {
                    failures.add(e);
                    return;
                }
            }
        }, "test-contention-" + index);
        threads.add(thread);
        thread.start();
    }

    /** Marks the moment the last fault ended; grants from then on count as resumed. */
    public void faultsEnded() {
        faultsEnded.set(System.nanoTime());
    }

    /**
     * Waits for the first grant after {@link #faultsEnded()}.
     *
     * @param bound how long to wait at most, counted from the end of the faults
     * @return milliseconds from the end of the faults to that grant, or -1 if none came in time
     */
    public long awaitGrantAfterFaults(Duration bound) {
        Arguments.notNull("bound", bound);
        long deadline = faultsEnded.get() + bound.toNanos();
        while (firstGrantAfterFaults.get() == 0 && System.nanoTime() - deadline < 0) {
            TestTiming.sleep(10);
        }
        long first = firstGrantAfterFaults.get();
        return first == 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(first - faultsEnded.get());
    }

    /**
     * Stops every contender and waits for it, then rethrows the first unexpected failure.
     *
     * @throws AssertionError if a contender failed or did not finish within a minute
     * @throws InterruptedException if interrupted while waiting
     */
    public void stop() throws InterruptedException {
        stop.set(true);
        for (Thread thread : threads) {
            thread.join(60_000);
            if (thread.isAlive()) {
                throw new AssertionError(thread.getName() + " did not finish");
            }
        }
        if (!failures.isEmpty()) {
            throw new AssertionError("a contender failed", failures.get(0));
        }
    }

    /** @return the proven holds */
    public HoldLog log() {
        return log;
    }

    /** @return grants, waits timed out (abandoned) and backend failures so far, for the test's output */
    public String summary() {
        return grants.get() + " grants, " + timeouts.get() + " waits timed out (abandoned), " + backendErrors.get()
                + " acquires failed with LockBackendException";
    }
}
