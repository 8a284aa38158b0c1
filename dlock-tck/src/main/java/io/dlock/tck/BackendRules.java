package io.dlock.tck;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.dlock.Capability;
import io.dlock.LockBackendException;
import io.dlock.LockClientConfig;
import io.dlock.LockHolder;
import io.dlock.LostReason;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.BackendUri;
import io.dlock.spi.HeldLock;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The SPI rules (B2, B3, and S5's second half): promises of {@link LockBackend} that the core's own behaviour hides from
 * the rules that go through {@link io.dlock.LockClient}. The core keeps one thread per lock and
 * client on the server and renews only leases it believes valid, so a backend that keys grants by
 * connection, or whose renew ignores the owner, can pass every client-level rule while breaking
 * what its javadoc promises; these rules open the provider's backend directly (found through
 * {@link ServiceLoader} by the fixture URI's scheme) and drive it the way the core may.
 * Part of the {@link LockProviderTck} chain: provider authors never subclass it directly.
 */
public abstract class BackendRules extends ElectionRules {

    /** For subclasses. */
    protected BackendRules() { }

    /** A grant as the TCK holds it, in the shape the backend renews and releases. */
    private record Held(String name, String ownerId, long fencingToken, Duration leaseTime, Object backendState)
            implements HeldLock { }

    private static final AtomicInteger THREADS = new AtomicInteger();

    /** Opens the fixture's provider's backend directly, closed after the test. */
    private LockBackend backend() {
        LockClientConfig config = config().build();
        BackendUri uri = BackendUri.parse(config.uri());
        String scheme = uri.scheme().toLowerCase(Locale.ROOT);
        LockProvider provider = null;
        for (LockProvider p : ServiceLoader.load(LockProvider.class)) {
            if (p.schemes().contains(scheme)) {
                provider = p;
                break;
            }
        }
        if (provider == null) {
            fail("no LockProvider on the class path handles the scheme '" + scheme + "' of the fixture's URI; "
                    + "register it in META-INF/services/io.dlock.spi.LockProvider");
        }
        BackendEvents events = new BackendEvents() {
            @Override
            public void allLeasesLost(LostReason reason) {
                System.out.println("[dlock-tck] backend reported every lease lost: " + reason);
            }

            @Override
            public void leaseLost(HeldLock lock, LostReason reason) {
                System.out.println("[dlock-tck] backend reported lease of '" + lock.name() + "' lost: " + reason);
            }
        };
        BackendContext context = new BackendContext(config, uri, r -> {
            Thread t = new Thread(r, "dlock-spi-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        }, events);
        LockBackend backend = provider.open(context);
        opened.add(backend);
        return backend;
    }

    private static String owner() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        return String.format("%016x%016x", r.nextLong(), r.nextLong());
    }

    /** One attempt, retried through busy answers for up to {@code patience}; empty if never granted. */
    private Optional<Held> grant(LockBackend backend, String name, String owner, Duration patience)
            throws InterruptedException {
        AcquireAttempt attempt = backend.newAttempt(new AcquireRequest(name, owner, lease()));
        long deadline = System.nanoTime() + patience.toNanos();
        boolean granted = false;
        try {
            while (true) {
                AttemptResult r = attempt.tryOnce();
                if (r.granted()) {
                    granted = true;
                    return Optional.of(new Held(name, owner, r.fencingToken(), lease(), r.state()));
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return Optional.empty();
                }
                attempt.awaitTurn(Duration.ofNanos(Math.min(left, Duration.ofMillis(50).toNanos())));
            }
        } finally {
            if (!granted) {
                attempt.abandon();
            }
        }
    }

    private Held grantNow(Rule rule, LockBackend backend, String name, String owner) throws InterruptedException {
        // a free lock: one attempt should do, the patience only covers a slow first connection
        return grant(backend, name, owner, lease().plus(opTimeout())).orElseThrow(() -> new AssertionError(
                rule.failure("a free lock '" + name + "' was not granted to owner " + owner)));
    }

    private boolean busyFor(LockBackend backend, String name) {
        String prober = owner();
        AcquireAttempt probe = backend.newAttempt(new AcquireRequest(name, prober, lease()));
        AttemptResult r = probe.tryOnce();
        if (r.granted()) {
            backend.release(new Held(name, prober, r.fencingToken(), lease(), r.state()));
            return false;
        }
        probe.abandon();
        return true;
    }

    private void checkHolder(Rule rule, LockBackend backend, String name, Held expected) {
        if (backend.capabilities().contains(Capability.HOLDER_QUERY)) {
            Optional<LockHolder> h = backend.holder(name);
            assertTrue(h.isPresent(), rule.failure("holder('" + name + "') says nobody holds it; owner "
                    + expected.ownerId() + " does"));
            assertEquals(expected.ownerId(), h.get().ownerId(), rule.failure("holder('" + name + "') names the wrong owner"));
        }
    }

    /**
     * The SPI half of S5: one backend connection serves many owners. A grant belongs to its owner
     * id, not to the connection or session that asked for it, so a second owner on the same
     * connection is refused while the first holds, and is granted once the first released. The
     * core never lets two threads of one client ask the server for one lock at once, so only a
     * direct call can show a backend that keys grants by connection.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    protected final void ownersOnOneConnectionExcludeEachOther() throws Exception {
        LockBackend a = backend();
        LockBackend b = backend();
        String name = name(Rule.S5);
        Held first = grantNow(Rule.S5, a, name, owner());
        assertTrue(first.fencingToken() > 0, Rule.S5.failure("a grant's token must be positive, was " + first.fencingToken()));
        AcquireAttempt second = a.newAttempt(new AcquireRequest(name, owner(), lease()));
        AttemptResult r = second.tryOnce();
        if (r.granted()) {
            fail(Rule.S5.failure("a second owner on the same backend connection was granted a lock the first owner holds "
                    + "(token " + first.fencingToken() + " then " + r.fencingToken() + "): grants are keyed by connection "
                    + "or session instead of by owner id"));
        }
        assertTrue(busyFor(b, name), Rule.S5.failure("another connection was granted a held lock"));
        checkHolder(Rule.S5, b, name, first);
        // a waiting attempt of the same connection that gives up leaves the first owner's grant alone
        second.abandon();
        second.abandon(); // idempotent
        assertTrue(busyFor(b, name), Rule.S5.failure("abandoning a busy attempt freed the lock another owner of the "
                + "same connection holds"));
        assertTrue(a.release(first), Rule.S5.failure("release of a held grant answered false"));
        Held next = grant(a, name, owner(), lease().plus(opTimeout())).orElseThrow(() -> new AssertionError(
                Rule.S5.failure("after the first owner released, another owner of the same connection was not granted")));
        if (a.capabilities().contains(Capability.FENCING)) {
            assertTrue(next.fencingToken() > first.fencingToken(), Rule.S5.failure("token " + next.fencingToken()
                    + " after token " + first.fencingToken()));
        }
        assertTrue(busyFor(b, name), Rule.S5.failure("the second owner's grant is not seen by another connection"));
        assertTrue(a.release(next), Rule.S5.failure("release of a held grant answered false"));
    }

    /**
     * B2: renew answers one result per lease, in the order asked, true only for leases their owner
     * still holds, and never takes over or frees another owner's grant. A renew of a lease that was
     * released, or that another owner now holds, answers false (it is not an unknown outcome, so it
     * must not throw). Only leases this backend granted are passed, as the core does.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void B2_renewIsOwnerCheckedPerLeaseInOrder() throws Exception {
        LockBackend a = backend();
        LockBackend b = backend();
        String p = name(Rule.B2);
        Held held1 = grantNow(Rule.B2, a, p + "-held-1", owner());
        Held released = grantNow(Rule.B2, a, p + "-released", owner());
        assertTrue(a.release(released), Rule.B2.failure("release of a held grant answered false"));
        Held stale = grantNow(Rule.B2, a, p + "-taken", owner());
        assertTrue(a.release(stale), Rule.B2.failure("release of a held grant answered false"));
        Held taker = grantNow(Rule.B2, b, p + "-taken", owner()); // another owner, on another connection, holds it now
        Held held2 = grantNow(Rule.B2, a, p + "-held-2", owner());

        // only leases this backend granted, as the core passes them: some still held, some not
        List<Held> batch = List.of(held1, released, held2, stale);
        boolean[] expected = {true, false, true, false};
        boolean[] got = renew(a, batch);
        assertArrayEquals(expected, got, Rule.B2.failure("renew of [held, released, held, taken by another owner] "
                + "answered " + Arrays.toString(got) + "; expected " + Arrays.toString(expected)));
        // the same leases in another order: the answers follow the request's order
        List<Held> reordered = List.of(stale, held2, released, held1);
        boolean[] expected2 = {false, true, false, true};
        boolean[] got2 = renew(a, reordered);
        assertArrayEquals(expected2, got2, Rule.B2.failure("renew of [taken by another owner, held, released, held] "
                + "answered " + Arrays.toString(got2) + "; expected " + Arrays.toString(expected2)));
        // nothing the stale renewals did may have touched the other owner, or re-created what was released
        assertTrue(busyFor(a, taker.name()), Rule.B2.failure("a stale renew freed the lock another owner holds"));
        checkHolder(Rule.B2, a, taker.name(), taker);
        assertFalse(busyFor(b, released.name()), Rule.B2.failure("a renew of a released lease took the lock again"));
        assertTrue(b.release(taker), Rule.B2.failure("the other owner's release answered false after stale renewals"));
        assertTrue(a.release(held1) & a.release(held2), Rule.B2.failure("release of a renewed grant answered false"));
        // a single lease, and an empty batch
        assertArrayEquals(new boolean[] {false}, renew(a, List.of(held1)), Rule.B2.failure(
                "renew of a released lease answered true"));
        assertEquals(0, renew(a, List.of()).length, Rule.B2.failure("renew of no lease must answer an empty array"));
    }

    private static boolean[] renew(LockBackend backend, List<Held> leases) {
        try {
            boolean[] r = backend.renew(leases);
            if (r == null) {
                fail(Rule.B2.failure("renew answered null"));
            }
            return r;
        } catch (LockBackendException e) {
            throw new AssertionError(Rule.B2.failure("renew threw although every outcome was known (a lease this "
                    + "owner no longer holds must answer false): " + e.getMessage()), e);
        }
    }

    /**
     * B3: release is owner-checked and answers what it did: true once for a held grant, false for a
     * repeated release and for a lease another owner now holds (which it must leave alone); never an
     * exception for "not held".
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void B3_releaseIsOwnerCheckedAndAnswersWhatItDid() throws Exception {
        LockBackend a = backend();
        LockBackend b = backend();
        String name = name(Rule.B3);
        Held first = grantNow(Rule.B3, a, name, owner());
        assertTrue(release(a, first), Rule.B3.failure("release of a held grant answered false"));
        assertFalse(release(a, first), Rule.B3.failure("a second release of the same grant answered true"));
        Held second = grantNow(Rule.B3, b, name, owner());
        assertFalse(release(a, first), Rule.B3.failure("a stale release answered true while another owner holds the lock"));
        assertTrue(busyFor(a, name), Rule.B3.failure("a stale release freed the lock another owner holds"));
        checkHolder(Rule.B3, a, name, second);
        assertTrue(release(b, second), Rule.B3.failure("release of a held grant answered false"));
        assertFalse(busyFor(a, name), Rule.B3.failure("a released lock stayed held"));
    }

    private static boolean release(LockBackend backend, Held lease) {
        try {
            return backend.release(lease);
        } catch (LockBackendException e) {
            throw new AssertionError(Rule.B3.failure("release threw although the outcome was known: " + e.getMessage()), e);
        }
    }
}
