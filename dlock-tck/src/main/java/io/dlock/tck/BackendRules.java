package io.dlock.tck;

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
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.RenewOutcome;
import java.util.ArrayList;
import java.time.Duration;
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

    private static final AtomicInteger THREADS = new AtomicInteger();

    /** Opens the fixture's provider's backend directly, closed after the test. */
    private LockBackend<?> backend() {
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
            public void leaseLost(String ownerId, LostReason reason) {
                System.out.println("[dlock-tck] backend reported the lease of owner " + ownerId + " lost: " + reason);
            }
        };
        BackendContext context = new BackendContext(config, uri, r -> {
            Thread t = new Thread(r, "dlock-spi-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        }, events);
        LockBackend<?> backend = provider.open(context);
        opened.add(backend);
        return backend;
    }

    private static String owner() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        return String.format("%016x%016x", r.nextLong(), r.nextLong());
    }

    /** One attempt, retried through busy answers for up to {@code patience}; empty if never granted. */
    private <S> Optional<Grant<S>> grant(LockBackend<S> backend, String name, String owner, Duration patience)
            throws InterruptedException {
        AcquireRequest request = new AcquireRequest(name, owner, lease());
        AcquireAttempt<S> attempt = backend.newAttempt(request);
        long deadline = System.nanoTime() + patience.toNanos();
        boolean granted = false;
        try {
            while (true) {
                AttemptResult<S> r = attempt.tryOnce();
                if (r instanceof AttemptResult.Granted<S> g) {
                    granted = true;
                    return Optional.of(Grant.of(request, g));
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return Optional.empty();
                }
                SpiAnswers.awaitTurn(attempt, Duration.ofNanos(Math.min(left, Duration.ofMillis(50).toNanos())));
            }
        } finally {
            if (!granted) {
                attempt.abandon();
            }
        }
    }

    private <S> Grant<S> grantNow(Rule rule, LockBackend<S> backend, String name, String owner)
            throws InterruptedException {
        // a free lock: one attempt should do, the patience only covers a slow first connection
        return grant(backend, name, owner, lease().plus(opTimeout())).orElseThrow(() -> new AssertionError(
                rule.failure("a free lock '" + name + "' was not granted to owner " + owner)));
    }

    private <S> boolean busyFor(LockBackend<S> backend, String name) {
        AcquireRequest request = new AcquireRequest(name, owner(), lease());
        AcquireAttempt<S> probe = backend.newAttempt(request);
        AttemptResult<S> r = probe.tryOnce();
        if (r instanceof AttemptResult.Granted<S> g) {
            backend.release(Grant.of(request, g));
            return false;
        }
        probe.abandon();
        return true;
    }

    private static void checkHolder(Rule rule, LockBackend<?> backend, String name, Grant<?> expected) {
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
        ownersOnOneConnectionExcludeEachOther(backend(), backend());
    }

    private <A, B> void ownersOnOneConnectionExcludeEachOther(LockBackend<A> a, LockBackend<B> b) throws Exception {
        String name = name(Rule.S5);
        Grant<A> first = grantNow(Rule.S5, a, name, owner());
        assertTrue(first.fencingToken() > 0, Rule.S5.failure("a grant's token must be positive, was " + first.fencingToken()));
        AcquireAttempt<A> second = a.newAttempt(new AcquireRequest(name, owner(), lease()));
        AttemptResult<A> r = second.tryOnce();
        if (r instanceof AttemptResult.Granted<A> g) {
            fail(Rule.S5.failure("a second owner on the same backend connection was granted a lock the first owner holds "
                    + "(token " + first.fencingToken() + " then " + g.fencingToken() + "): grants are keyed by connection "
                    + "or session instead of by owner id"));
        }
        assertTrue(busyFor(b, name), Rule.S5.failure("another connection was granted a held lock"));
        checkHolder(Rule.S5, b, name, first);
        // a waiting attempt of the same connection that gives up leaves the first owner's grant alone
        second.abandon();
        second.abandon(); // idempotent
        assertTrue(busyFor(b, name), Rule.S5.failure("abandoning a busy attempt freed the lock another owner of the "
                + "same connection holds"));
        assertEquals(ReleaseOutcome.RELEASED, a.release(first), Rule.S5.failure("release of a held grant"));
        Grant<A> next = grant(a, name, owner(), lease().plus(opTimeout())).orElseThrow(() -> new AssertionError(
                Rule.S5.failure("after the first owner released, another owner of the same connection was not granted")));
        if (a.capabilities().contains(Capability.FENCING)) {
            assertTrue(next.fencingToken() > first.fencingToken(), Rule.S5.failure("token " + next.fencingToken()
                    + " after token " + first.fencingToken()));
        }
        assertTrue(busyFor(b, name), Rule.S5.failure("the second owner's grant is not seen by another connection"));
        assertEquals(ReleaseOutcome.RELEASED, a.release(next), Rule.S5.failure("release of a held grant"));
    }

    /**
     * B2: renew answers one outcome per grant, in the order asked: renewed for grants their owner
     * still holds, not-held for the others (neither unknown nor an exception: the outcome is
     * known), and never takes over or frees another owner's grant or re-creates a released one.
     * Only grants this backend made are passed, as the core does.
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void B2_renewIsOwnerCheckedPerLeaseInOrder() throws Exception {
        renewIsOwnerCheckedPerLeaseInOrder(backend(), backend());
    }

    private <A, B> void renewIsOwnerCheckedPerLeaseInOrder(LockBackend<A> a, LockBackend<B> b) throws Exception {
        String p = name(Rule.B2);
        Grant<A> held1 = grantNow(Rule.B2, a, p + "-held-1", owner());
        Grant<A> released = grantNow(Rule.B2, a, p + "-released", owner());
        assertEquals(ReleaseOutcome.RELEASED, a.release(released), Rule.B2.failure("release of a held grant"));
        Grant<A> stale = grantNow(Rule.B2, a, p + "-taken", owner());
        assertEquals(ReleaseOutcome.RELEASED, a.release(stale), Rule.B2.failure("release of a held grant"));
        Grant<B> taker = grantNow(Rule.B2, b, p + "-taken", owner()); // another owner, on another connection, holds it now
        Grant<A> held2 = grantNow(Rule.B2, a, p + "-held-2", owner());

        // only grants this backend made, as the core passes them: some still held, some not
        List<String> expected = List.of(RENEWED, NOT_HELD, RENEWED, NOT_HELD);
        List<String> got = renew(a, List.of(held1, released, held2, stale));
        assertEquals(expected, got, Rule.B2.failure("renew of [held, released, held, taken by another owner] answered "
                + got + "; expected " + expected));
        // the same grants in another order: the outcomes follow the request's order
        List<String> expected2 = List.of(NOT_HELD, RENEWED, NOT_HELD, RENEWED);
        List<String> got2 = renew(a, List.of(stale, held2, released, held1));
        assertEquals(expected2, got2, Rule.B2.failure("renew of [taken by another owner, held, released, held] "
                + "answered " + got2 + "; expected " + expected2));
        // nothing the stale renewals did may have touched the other owner, or re-created what was released
        assertTrue(busyFor(a, taker.name()), Rule.B2.failure("a stale renew freed the lock another owner holds"));
        checkHolder(Rule.B2, a, taker.name(), taker);
        assertFalse(busyFor(b, released.name()), Rule.B2.failure("a renew of a released lease took the lock again"));
        assertEquals(ReleaseOutcome.RELEASED, b.release(taker),
                Rule.B2.failure("the other owner's release after stale renewals"));
        assertEquals(ReleaseOutcome.RELEASED, a.release(held1), Rule.B2.failure("release of a renewed grant"));
        assertEquals(ReleaseOutcome.RELEASED, a.release(held2), Rule.B2.failure("release of a renewed grant"));
        // a single grant, and an empty batch
        assertEquals(List.of(NOT_HELD), renew(a, List.of(held1)), Rule.B2.failure("renew of a released lease"));
        assertEquals(List.of(), renew(a, List.of()), Rule.B2.failure("renew of no lease must answer an empty list"));
    }

    private static final String RENEWED = "renewed";
    private static final String NOT_HELD = "not-held";

    /** Renews and names each outcome; an unknown outcome, a throw or a malformed answer fails B2 (every outcome is known). */
    private static <S> List<String> renew(LockBackend<S> backend, List<Grant<S>> grants) {
        List<RenewOutcome> r;
        try {
            r = backend.renew(grants);
        } catch (LockBackendException e) {
            throw new AssertionError(Rule.B2.failure("renew threw although every outcome was known (a lease this "
                    + "owner no longer holds must answer not-held): " + e.getMessage()), e);
        }
        if (r == null) {
            fail(Rule.B2.failure("renew answered null"));
        }
        assertEquals(grants.size(), r.size(), Rule.B2.failure("renew of " + grants.size() + " grant(s) answered "
                + r.size() + " outcome(s); it must answer one per grant"));
        List<String> names = new ArrayList<>(r.size());
        for (RenewOutcome o : r) {
            if (o instanceof RenewOutcome.Renewed) {
                names.add(RENEWED);
            } else if (o instanceof RenewOutcome.NotHeld) {
                names.add(NOT_HELD);
            } else if (o instanceof RenewOutcome.Unknown u) {
                throw new AssertionError(Rule.B2.failure("renew answered unknown for a grant whose outcome was known "
                        + "(a lease this owner no longer holds must answer not-held): " + u.cause().getMessage()),
                        u.cause());
            } else {
                fail(Rule.B2.failure("renew answered " + o + " for a grant"));
            }
        }
        return names;
    }

    /**
     * B3: release is owner-checked and answers what it did: released once for a held grant,
     * not-held for a repeated release and for a lease another owner now holds (which it must leave
     * alone); never an exception for "not held".
     *
     * @throws Exception if the rule is violated, the backend fails, or the test is interrupted
     */
    @Test
    public void B3_releaseIsOwnerCheckedAndAnswersWhatItDid() throws Exception {
        releaseIsOwnerChecked(backend(), backend());
    }

    private <A, B> void releaseIsOwnerChecked(LockBackend<A> a, LockBackend<B> b) throws Exception {
        String name = name(Rule.B3);
        Grant<A> first = grantNow(Rule.B3, a, name, owner());
        assertTrue(release(a, first), Rule.B3.failure("release of a held grant answered not-held"));
        assertFalse(release(a, first), Rule.B3.failure("a second release of the same grant answered released"));
        Grant<B> second = grantNow(Rule.B3, b, name, owner());
        assertFalse(release(a, first), Rule.B3.failure("a stale release answered released while another owner holds "
                + "the lock"));
        assertTrue(busyFor(a, name), Rule.B3.failure("a stale release freed the lock another owner holds"));
        checkHolder(Rule.B3, a, name, second);
        assertTrue(release(b, second), Rule.B3.failure("release of a held grant answered not-held"));
        assertFalse(busyFor(a, name), Rule.B3.failure("a released lock stayed held"));
    }

    /** @return whether the release answered {@link ReleaseOutcome#RELEASED} */
    private static <S> boolean release(LockBackend<S> backend, Grant<S> grant) {
        try {
            ReleaseOutcome r = backend.release(grant);
            if (r == null) {
                fail(Rule.B3.failure("release answered null"));
            }
            return r == ReleaseOutcome.RELEASED;
        } catch (LockBackendException e) {
            throw new AssertionError(Rule.B3.failure("release threw although the outcome was known: " + e.getMessage()), e);
        }
    }
}
