package io.dlock.tck;

import io.dlock.spi.support.Arguments;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Capability;
import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import io.dlock.spi.BackendUri;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.function.Executable;

/**
 * Checks that a client's operations against a backend that stopped answering end within the
 * operation timeout plus a small margin, as the API promises: over a {@link FreezableClient}
 * whose network is frozen (connections open, nothing answered, the way a paused server or a
 * stalled network looks), an acquire with a long wait, an acquire without a wait and a holder
 * query (where the backend has {@link Capability#HOLDER_QUERY}) must throw
 * {@link LockBackendException}, and a release (which never throws) must return, each within the
 * bound. What a backend does after such a failure (undoing an attempt the server may have
 * applied, say) belongs in the background, not on the caller's time.
 *
 * <p>Stricter than the TCK's rule V3, whose bound leaves room for clients that spend a whole
 * timeout connecting and another reading; dlock's own backends use this check in their tests.
 * Stateless and thread-safe.
 */
public final class OperationDeadline {

    /**
     * The operation timeout {@link #check(TckFixture)} gives its clients: long enough that work a
     * backend does on the caller's time after a failure (the clean-up of an attempt, a second
     * request) shows against the margin.
     */
    public static final Duration TIMEOUT = Duration.ofSeconds(3);

    /**
     * How late past {@link #TIMEOUT} an operation over a frozen network may end in
     * {@link #check(TckFixture)}: scheduling on a loaded machine, well under the quarter of the
     * timeout that such work used to add.
     */
    public static final Duration MARGIN = Duration.ofMillis(400);

    /**
     * How soon an acquire against an address where nothing listens must fail in
     * {@link #check(TckFixture)}, whose clients there have an operation timeout of a minute: a
     * refused connection is known at once; this leaves room for loading a client library's
     * classes on a loaded machine.
     */
    public static final Duration REFUSED_BOUND = Duration.ofSeconds(2);

    private OperationDeadline() { }

    /**
     * How long one operation over the frozen network took.
     *
     * @param operation what was called
     * @param took how long it took until it threw (or, for a release, returned)
     */
    public record Timing(String operation, Duration took) {

        /**
         * @throws IllegalArgumentException if {@code operation} or {@code took} is {@code null}
         */
        public Timing {
            Arguments.notNull("operation", operation);
            Arguments.notNull("took", took);
        }

        @Override
        public String toString() {
            return operation + " " + took.toMillis() + " ms";
        }
    }

    /**
     * Runs both checks on a fixture's backend: {@link #check(FreezableClient, Duration)} on a
     * freezable client with an operation timeout of {@link #TIMEOUT} and the fixture's lease time,
     * within {@link #MARGIN}; and, if the fixture has an {@link TckFixture#unreachableUri()},
     * {@link #checkNothingListens(String, Duration)} within {@link #REFUSED_BOUND}.
     *
     * @param fixture a fixture that can freeze its clients
     * @return the timings, in the order the operations ran
     * @throws IllegalArgumentException if {@code fixture} is null or cannot freeze a client
     * @throws InterruptedException if interrupted
     */
    public static List<Timing> check(TckFixture fixture) throws InterruptedException {
        if (fixture == null) {
            throw new IllegalArgumentException("fixture must not be null");
        }
        List<Timing> timings = new ArrayList<>();
        FreezableClient frozen = fixture.openFreezable(fixture.clientConfig().operationTimeout(TIMEOUT)
                .defaultLockOptions(LockOptions.builder().leaseTime(fixture.leaseTime()).build()))
                .orElseThrow(() -> new IllegalArgumentException("fixture " + fixture.name()
                        + " cannot freeze a client"));
        try (frozen) {
            timings.addAll(check(frozen, MARGIN));
        }
        if (fixture.unreachableUri().isPresent()) {
            timings.add(checkNothingListens(fixture.unreachableUri().get(), REFUSED_BOUND));
        }
        return timings;
    }

    /**
     * Checks that a client of a URI where nothing listens (a closed port: every connection is
     * refused) fails at once rather than at its operation timeout, which is a minute here: opening
     * it, or else its first acquire, must throw {@link LockBackendException} within {@code bound}.
     *
     * @param uri a URI of the backend's scheme whose addresses refuse connections
     * @param bound how soon the failure must come
     * @return how long it took
     * @throws IllegalArgumentException if an argument is null
     */
    public static Timing checkNothingListens(String uri, Duration bound) {
        if (uri == null) {
            throw new IllegalArgumentException("uri must not be null");
        }
        if (bound == null) {
            throw new IllegalArgumentException("bound must not be null");
        }
        LockClientConfig config = LockClientConfig.builder(uri).operationTimeout(Duration.ofMinutes(1)).build();
        long t0 = System.nanoTime();
        LockBackendException e = assertThrows(LockBackendException.class, () -> {
            try (LockClient client = LockClient.open(config)) {
                client.lock("deadline-nothing-listens").tryAcquire(Duration.ofMinutes(1));
            }
        }, "a client of " + BackendUri.redact(uri) + ", where nothing listens, did not fail with LockBackendException");
        Timing t = new Timing("refused", Duration.ofNanos(System.nanoTime() - t0));
        System.out.println("[dlock-tck] nothing listens at " + BackendUri.redact(uri) + ": failed after "
                + t.took().toMillis() + " ms: " + e.getMessage());
        assertTrue(t.took().compareTo(bound) <= 0, "a client of " + BackendUri.redact(uri) + ", where nothing "
                + "listens, failed after " + t.took().toMillis() + " ms, not within " + bound.toMillis() + " ms: a "
                + "refused connection is known at once (" + e.getMessage() + ")");
        return t;
    }

    /**
     * Takes a lease over the client's working network, freezes it, runs each operation, asserts
     * that each ended within the client's operation timeout plus {@code margin}, prints the
     * timings, and unfreezes. The client stays open; the caller closes it.
     *
     * @param frozen a client whose network is working now and can be frozen
     * @param margin how late past the operation timeout an operation may end: scheduling on a
     *     loaded machine, not work the backend does
     * @return the timings, in the order the operations ran
     * @throws IllegalArgumentException if an argument is null or {@code margin} is negative
     * @throws InterruptedException if interrupted
     */
    public static List<Timing> check(FreezableClient frozen, Duration margin) throws InterruptedException {
        if (frozen == null) {
            throw new IllegalArgumentException("frozen must not be null");
        }
        if (margin == null || margin.isNegative()) {
            throw new IllegalArgumentException("margin must be zero or positive, was " + margin);
        }
        LockClient client = frozen.client();
        Duration timeout = client.config().operationTimeout();
        Duration bound = timeout.plus(margin);
        String run = Long.toString(System.nanoTime(), 36);
        String held = "deadline-held-" + run;
        // before the freeze: connections and sessions are up, and a lease is held to release later
        Lease lease = client.lock(held).tryAcquire(Duration.ofSeconds(30))
                .orElseThrow(() -> new AssertionError("no lease on '" + held + "' before the freeze"));
        client.lock("deadline-warm-" + run).tryAcquire().ifPresent(Lease::release);
        List<Timing> timings = new ArrayList<>();
        frozen.freeze();
        try {
            // first, while the lease is still valid, so that the release is sent
            long t0 = System.nanoTime();
            lease.release(); // never throws: a failed release is logged and the lease ends by expiry
            timings.add(new Timing("release", Duration.ofNanos(System.nanoTime() - t0)));
            timings.add(fails("tryAcquire(30s)",
                    () -> client.lock("deadline-wait-" + run).tryAcquire(Duration.ofSeconds(30))));
            timings.add(fails("tryAcquire()", () -> client.lock("deadline-try-" + run).tryAcquire()));
            if (client.capabilities().contains(Capability.HOLDER_QUERY)) {
                timings.add(fails("holder", () -> client.holder(held)));
            }
        } finally {
            frozen.unfreeze();
        }
        String summary = String.format(Locale.ROOT, "operation timeout %d ms, bound %d ms: %s",
                timeout.toMillis(), bound.toMillis(), timings);
        System.out.println("[dlock-tck] operations over a frozen network: " + summary);
        for (Timing t : timings) {
            assertTrue(t.took().compareTo(bound) <= 0, t.operation() + " over a frozen network ended after "
                    + t.took().toMillis() + " ms, later than the operation timeout plus the margin (" + summary + ")");
        }
        return timings;
    }

    private static Timing fails(String operation, Executable call) {
        long t0 = System.nanoTime();
        assertThrows(LockBackendException.class, call,
                operation + " over a frozen network did not fail with LockBackendException");
        return new Timing(operation, Duration.ofNanos(System.nanoTime() - t0));
    }
}
