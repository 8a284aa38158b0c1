package io.dlock.tck.mem;

import io.dlock.Capability;
import io.dlock.LockBackendException;
import io.dlock.LockConfigurationException;
import io.dlock.LockHolder;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.RenewOutcome;
import io.dlock.tck.Rule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * Deliberately broken providers for the TCK's self-test: each is the reference provider with one
 * realistic bug, and must fail exactly the rules listed with it, passing every other one. One
 * provider class serves every broken scheme ({@code broken-<bug>}), registered for the tests only.
 */
public final class BrokenProviders implements LockProvider {

    /**
     * One broken provider: its scheme, its bug, the rules that must catch it, the rules it may fail
     * besides (consequences that depend on timing, such as an election that happens to hand over
     * before or after an expiry), and how it breaks the backend.
     */
    public record Mutant(String scheme, String bug, Set<Rule> caughtBy, Set<Rule> mayAlsoFail,
                         Function<Ctx, LockBackend<?>> make) { }

    /** What a mutant is built from: the reference backend and the client's context. */
    public record Ctx(MemLockProvider.MemBackend real, BackendContext context) { }

    private static final Map<String, Mutant> MUTANTS = new LinkedHashMap<>();

    private static void add(String bug, String description, Set<Rule> caughtBy, Function<Ctx, LockBackend<?>> make) {
        add(bug, description, caughtBy, Set.of(), make);
    }

    private static void add(String bug, String description, Set<Rule> caughtBy, Set<Rule> mayAlsoFail,
                            Function<Ctx, LockBackend<?>> make) {
        String scheme = "broken-" + bug;
        MUTANTS.put(scheme, new Mutant(scheme, description, caughtBy, mayAlsoFail, make));
    }

    private static Set<Rule> rules(Rule... rules) {
        return rules.length == 0 ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(Arrays.asList(rules)));
    }

    /** @return every broken provider, in the order of the table in docs/TCK.md */
    public static List<Mutant> all() {
        return List.copyOf(MUTANTS.values());
    }

    /** Creates the provider (used by {@link java.util.ServiceLoader}). */
    public BrokenProviders() { }

    @Override
    public String name() {
        return "broken";
    }

    @Override
    public Set<String> schemes() {
        return MUTANTS.keySet();
    }

    @Override
    public LockBackend<?> open(BackendContext context) {
        Mutant m = MUTANTS.get(context.uri().scheme().toLowerCase(Locale.ROOT));
        MemLockProvider.MemBackend real = (MemLockProvider.MemBackend) new MemLockProvider().open(context);
        return m.make().apply(new Ctx(real, context));
    }

    // ------------------------------------------------------------------ plumbing

    /**
     * Forwards to the reference backend; a mutant overrides one thing. The reference keeps no
     * per-grant state, and neither does any mutant ({@code Void}).
     */
    static class Forwarding implements LockBackend<Void> {
        final MemLockProvider.MemBackend real;

        Forwarding(MemLockProvider.MemBackend real) {
            this.real = real;
        }

        @Override
        public Set<Capability> capabilities() {
            return real.capabilities();
        }

        @Override
        public Duration minimumLeaseTime() {
            return real.minimumLeaseTime();
        }

        @Override
        public Duration maximumLeaseTime() {
            return real.maximumLeaseTime();
        }

        @Override
        public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
            return real.newAttempt(request);
        }

        @Override
        public List<RenewOutcome> renew(List<Grant<Void>> locks) {
            return real.renew(locks);
        }

        @Override
        public ReleaseOutcome release(Grant<Void> lock) {
            return real.release(lock);
        }

        @Override
        public Optional<LockHolder> holder(String name) {
            return real.holder(name);
        }

        @Override
        public void close() {
            real.close();
        }

        /** Runs a request over the client's emulated network; the server checks the password first. */
        <T> T call(String name, java.util.function.Supplier<T> request) {
            return real.request(name, request);
        }

        MemServer server() {
            return real.server;
        }
    }

    /**
     * The reference backend, but what a try throws as {@link LockBackendException} becomes what
     * {@code failure} makes of it.
     */
    static Function<Ctx, LockBackend<?>> tryOnceFailing(
            java.util.function.BiFunction<AcquireRequest, LockBackendException, RuntimeException> failure) {
        return c -> new Forwarding(c.real()) {
            @Override
            public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
                return new ForwardingAttempt(real.newAttempt(request)) {
                    @Override
                    public AttemptResult<Void> tryOnce() {
                        try {
                            return super.tryOnce();
                        } catch (LockBackendException e) {
                            throw failure.apply(request, e);
                        }
                    }
                };
            }
        };
    }

    /** Forwards an attempt; a mutant overrides one step. */
    static class ForwardingAttempt implements AcquireAttempt<Void> {
        final AcquireAttempt<Void> delegate;

        ForwardingAttempt(AcquireAttempt<Void> delegate) {
            this.delegate = delegate;
        }

        @Override
        public AttemptResult<Void> tryOnce() {
            return delegate.tryOnce();
        }

        @Override
        public CompletionStage<Void> turn(Duration maxWait) {
            return delegate.turn(maxWait);
        }

        @Override
        public void abandon() {
            delegate.abandon();
        }
    }

    /** An attempt that grants through a custom server call, with the reference's waiting and abandon. */
    abstract static class CustomGrant implements AcquireAttempt<Void> {
        final Forwarding backend;
        final AcquireRequest request;
        private final AcquireAttempt<Void> reference;
        private volatile boolean unknown;

        CustomGrant(Forwarding backend, AcquireRequest request) {
            this.backend = backend;
            this.request = request;
            this.reference = backend.real.newAttempt(request);
        }

        /** @return the token, or minus the remaining nanoseconds when busy, as {@link MemServer#tryAcquire} */
        abstract long grant(MemServer server, long leaseNanos);

        @Override
        public AttemptResult<Void> tryOnce() {
            unknown = true;
            long r = backend.call(request.name(), () -> grant(backend.server(), request.leaseTime().toNanos()));
            unknown = false;
            return r > 0 ? AttemptResult.granted(r, null) : AttemptResult.busy(Duration.ofNanos(-r));
        }

        @Override
        public CompletionStage<Void> turn(Duration maxWait) {
            return reference.turn(maxWait);
        }

        @Override
        public void abandon() {
            if (unknown) {
                try {
                    backend.call(request.name(), () -> {
                        Optional<LockHolder> h = backend.server().holder(request.name());
                        return h.isPresent() && h.get().ownerId().equals(request.ownerId())
                                && backend.server().release(request.name(), request.ownerId(), h.get().fencingToken());
                    });
                } catch (RuntimeException ignored) {
                    // best effort
                }
            }
        }
    }

    /** How a grant mutant asks the server: returns the token, or minus the remaining nanoseconds when busy. */
    @FunctionalInterface
    interface GrantCall {
        long grant(MemServer server, AcquireRequest request, long leaseNanos);
    }

    /** A backend whose attempts grant through {@code grant}, declaring {@code extra} capabilities too. */
    static class Granting extends Forwarding {
        private final Set<Capability> extra;
        private final GrantCall grant;

        Granting(Ctx c, Set<Capability> extra, GrantCall grant) {
            super(c.real());
            this.extra = extra;
            this.grant = grant;
        }

        @Override
        public Set<Capability> capabilities() {
            Set<Capability> caps = EnumSet.copyOf(real.capabilities());
            caps.addAll(extra);
            return caps;
        }

        @Override
        public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
            return new CustomGrant(this, request) {
                @Override
                long grant(MemServer server, long leaseNanos) {
                    return grant.grant(server, request, leaseNanos);
                }
            };
        }
    }

    static Forwarding granting(Ctx c, Set<Capability> extra, GrantCall grant) {
        return new Granting(c, extra, grant);
    }

    /** A backend whose waiters only sleep (poll), declaring NOTIFY_WAITERS or not. */
    static Forwarding polling(Ctx c, boolean declareNotify) {
        return new Forwarding(c.real()) {
            @Override
            public Set<Capability> capabilities() {
                Set<Capability> caps = EnumSet.copyOf(real.capabilities());
                if (!declareNotify) {
                    caps.remove(Capability.NOTIFY_WAITERS);
                }
                return caps;
            }

            @Override
            public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
                return new ForwardingAttempt(real.newAttempt(request)) {
                    @Override
                    public CompletionStage<Void> turn(Duration maxWait) {
                        return new CompletableFuture<>(); // never told: the core's timer paces the tries
                    }
                };
            }
        };
    }

    /** The outcome of a renewal the server answered: renewed, or not held. */
    static RenewOutcome outcome(boolean renewed) {
        return renewed ? RenewOutcome.renewed() : RenewOutcome.notHeld();
    }

    /** The outcome of a release the server answered: released, or not held. */
    static ReleaseOutcome released(boolean released) {
        return released ? ReleaseOutcome.RELEASED : ReleaseOutcome.NOT_HELD;
    }

    /** Renews each grant with a server call answering whether it was renewed, all in one request. */
    static List<RenewOutcome> renewEach(Forwarding b, List<Grant<Void>> locks,
                                        java.util.function.BiPredicate<MemServer, Grant<Void>> renew) {
        return b.call(null, () -> {
            List<RenewOutcome> out = new ArrayList<>(locks.size());
            for (Grant<Void> l : locks) {
                out.add(outcome(renew.test(b.server(), l)));
            }
            return out;
        });
    }

    /** A renew that extends each lease by a given time, owner-checked. */
    static List<RenewOutcome> renewFor(Forwarding b, List<Grant<Void>> locks, Function<Grant<Void>, Long> leaseNanos) {
        return renewEach(b, locks, (server, l) -> server.renew(l.name(), l.ownerId(), l.fencingToken(),
                leaseNanos.apply(l)));
    }

    /** A grant with another name, owner id or token, as a mutant maps it for the server. */
    static Grant<Void> mapped(Grant<Void> l, String name, String ownerId, long token) {
        return new Grant<>(name, ownerId, token, l.leaseTime(), null);
    }

    /** A backend that renames every lock before it reaches the server. */
    static LockBackend<Void> renaming(Ctx c, Function<String, String> rename) {
        return new Forwarding(c.real()) {
            @Override
            public AcquireAttempt<Void> newAttempt(AcquireRequest r) {
                return real.newAttempt(new AcquireRequest(rename.apply(r.name()), r.ownerId(), r.leaseTime()));
            }

            @Override
            public List<RenewOutcome> renew(List<Grant<Void>> locks) {
                List<Grant<Void>> mapped = new ArrayList<>();
                locks.forEach(l -> mapped.add(mapped(l, rename.apply(l.name()), l.ownerId(), l.fencingToken())));
                return real.renew(mapped);
            }

            @Override
            public ReleaseOutcome release(Grant<Void> l) {
                return real.release(mapped(l, rename.apply(l.name()), l.ownerId(), l.fencingToken()));
            }

            @Override
            public Optional<LockHolder> holder(String name) {
                return real.holder(rename.apply(name)).map(h -> new LockHolder(name, h.ownerId(), h.fencingToken(),
                        h.remaining().orElse(null)));
            }
        };
    }

    /** How a token mutant turns the server's token into the one it hands out. */
    @FunctionalInterface
    interface TokenMap {
        long map(MemServer server, long serverToken);
    }

    /**
     * A backend that hands out other tokens than the server's, remembering the server's by owner
     * id (unique per grant) so that renew and release still reach the right grant.
     */
    static LockBackend<Void> tokensMapped(Ctx c, TokenMap map) {
        Map<String, Long> serverTokens = new ConcurrentHashMap<>();
        return new Forwarding(c.real()) {
            @Override
            public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
                return new ForwardingAttempt(real.newAttempt(request)) {
                    @Override
                    public AttemptResult<Void> tryOnce() {
                        AttemptResult<Void> r = super.tryOnce();
                        if (r instanceof AttemptResult.Granted<Void> g) {
                            serverTokens.put(request.ownerId(), g.fencingToken());
                            return AttemptResult.granted(map.map(server(), g.fencingToken()), null);
                        }
                        return r;
                    }
                };
            }

            /** The server's token of a grant (one this backend never made keeps its own). */
            private long serverToken(Grant<Void> l) {
                return serverTokens.getOrDefault(l.ownerId(), l.fencingToken());
            }

            @Override
            public List<RenewOutcome> renew(List<Grant<Void>> locks) {
                List<Grant<Void>> mapped = new ArrayList<>();
                locks.forEach(l -> mapped.add(mapped(l, l.name(), l.ownerId(), serverToken(l))));
                return real.renew(mapped);
            }

            @Override
            public ReleaseOutcome release(Grant<Void> lock) {
                return real.release(mapped(lock, lock.name(), lock.ownerId(), serverToken(lock)));
            }
        };
    }

    private static long nanos(Grant<Void> l) {
        return l.leaseTime().toNanos();
    }

    // ------------------------------------------------------------------ the mutants

    static {
        // ---- release
        add("release", "release deletes the lock without checking the owner", rules(Rule.S3, Rule.B3, Rule.E2), rules(Rule.N1),
                c -> new Forwarding(c.real()) {
                    @Override
                    public ReleaseOutcome release(Grant<Void> lock) {
                        return released(call(lock.name(), () -> server().forceRelease(lock.name())));
                    }
                });
        add("release-not-sent", "release answers true without sending anything: the lock ends by expiry",
                rules(Rule.L1, Rule.L2, Rule.L7, Rule.L8, Rule.L11, Rule.V2, Rule.B2, Rule.B3), rules(Rule.E3, Rule.E4),
                c -> new Forwarding(c.real()) {
                    @Override
                    public ReleaseOutcome release(Grant<Void> lock) {
                        return ReleaseOutcome.RELEASED;
                    }
                });
        add("release-always-true", "release answers true even when the owner no longer held the lock", rules(Rule.B3),
                c -> new Forwarding(c.real()) {
                    @Override
                    public ReleaseOutcome release(Grant<Void> lock) {
                        real.release(lock);
                        return ReleaseOutcome.RELEASED;
                    }
                });

        // ---- tokens
        add("token", "the token handed to the holder is counted by the client, not the server",
                rules(Rule.S2, Rule.S8, Rule.S11, Rule.L6, Rule.E1, Rule.E2, Rule.E3, Rule.E4),
                c -> {
                    AtomicLong clientCounter = new AtomicLong();
                    return tokensMapped(c, (server, token) -> clientCounter.incrementAndGet());
                });
        add("token-reset-on-restart", "the token counter starts again from 1 after a server restart",
                rules(Rule.L6, Rule.S11), rules(Rule.N1, Rule.N2),
                c -> tokensMapped(c, (server, token) -> token - server.counterAtKill()));
        // ---- renew
        add("validity", "renewal is fire-and-forget: it reports success without waiting for the server",
                rules(Rule.S7, Rule.S11, Rule.L6, Rule.B2, Rule.E2),
                c -> new Forwarding(c.real()) {
                    @Override
                    public List<RenewOutcome> renew(List<Grant<Void>> locks) {
                        List<Grant<Void>> copy = new ArrayList<>(locks);
                        Thread sender = new Thread(() -> {
                            try {
                                real.renew(copy);
                            } catch (LockBackendException ignored) {
                                // the bug: nobody looks at the answer
                            }
                        }, "dlock-tck-broken-renew");
                        sender.setDaemon(true);
                        sender.start();
                        return Collections.nCopies(locks.size(), RenewOutcome.renewed());
                    }
                });
        add("renew-any-owner", "renew extends the lock whoever holds it, without the owner check", rules(Rule.B2),
                c -> new Forwarding(c.real()) {
                    @Override
                    public List<RenewOutcome> renew(List<Grant<Void>> locks) {
                        return renewEach(this, locks, (server, l) -> server.renewWhoeverHolds(l.name(), nanos(l)));
                    }
                });
        add("renew-recreates", "renew re-creates a lock the server no longer has", rules(Rule.S11, Rule.B2),
                c -> new Forwarding(c.real()) {
                    @Override
                    public List<RenewOutcome> renew(List<Grant<Void>> locks) {
                        return renewEach(this, locks, (server, l) -> server.renewOrRecreate(l.name(), l.ownerId(),
                                l.fencingToken(), nanos(l)));
                    }
                });
        add("renew-reversed", "a batched renew answers in reverse order", rules(Rule.B2),
                c -> new Forwarding(c.real()) {
                    @Override
                    public List<RenewOutcome> renew(List<Grant<Void>> locks) {
                        List<RenewOutcome> out = new ArrayList<>(real.renew(locks));
                        Collections.reverse(out);
                        return out;
                    }
                });
        add("renew-first-only", "a batched renew renews only its first lease and answers true for all",
                rules(Rule.S11, Rule.L3, Rule.B2),
                c -> new Forwarding(c.real()) {
                    @Override
                    public List<RenewOutcome> renew(List<Grant<Void>> locks) {
                        if (!locks.isEmpty()) {
                            real.renew(locks.subList(0, 1));
                        }
                        return Collections.nCopies(locks.size(), RenewOutcome.renewed());
                    }
                });
        add("renew-throws-stale", "renew throws instead of answering false for a lease not held", rules(Rule.B2),
                c -> new Forwarding(c.real()) {
                    @Override
                    public List<RenewOutcome> renew(List<Grant<Void>> locks) {
                        List<RenewOutcome> r = real.renew(locks);
                        for (RenewOutcome o : r) {
                            if (o instanceof RenewOutcome.NotHeld) {
                                throw new LockBackendException("renew: not held", locks.get(0).name(), null);
                            }
                        }
                        return r;
                    }
                });
        add("renew-unknown-stale", "renew answers unknown instead of not-held for a lease this owner no longer holds",
                rules(Rule.B2),
                c -> new Forwarding(c.real()) {
                    @Override
                    public List<RenewOutcome> renew(List<Grant<Void>> locks) {
                        List<RenewOutcome> out = new ArrayList<>(real.renew(locks));
                        for (int i = 0; i < out.size(); i++) {
                            if (out.get(i) instanceof RenewOutcome.NotHeld) {
                                out.set(i, RenewOutcome.unknown(new LockBackendException("renew: no answer",
                                        locks.get(i).name(), null)));
                            }
                        }
                        return out;
                    }
                });
        add("renew-short", "renew extends the server's lease by half the lease time", rules(Rule.S7, Rule.E2),
                c -> new Forwarding(c.real()) {
                    @Override
                    public List<RenewOutcome> renew(List<Grant<Void>> locks) {
                        return renewFor(this, locks, l -> nanos(l) / 2);
                    }
                });
        add("renew-long", "renew extends the server's lease by three lease times", rules(Rule.L2),
                c -> new Forwarding(c.real()) {
                    @Override
                    public List<RenewOutcome> renew(List<Grant<Void>> locks) {
                        return renewFor(this, locks, l -> nanos(l) * 3);
                    }
                });

        // ---- grant and expiry
        add("grant-long", "the server keeps a grant three lease times", rules(Rule.L2),
                c -> granting(c, Set.of(), (server, r, lease) -> server.tryAcquire(r.name(), r.ownerId(), lease * 3)));
        add("grant-short", "the server keeps a grant half the lease time", rules(Rule.S7, Rule.S10, Rule.L2),
                c -> granting(c, Set.of(), (server, r, lease) -> server.tryAcquire(r.name(), r.ownerId(), lease / 2)));
        add("expiry-never", "the server never expires a lock: only a release frees it",
                rules(Rule.S3, Rule.S7, Rule.S8, Rule.S11, Rule.L2, Rule.L6, Rule.N1, Rule.N2, Rule.E2),
                c -> new Granting(c, Set.of(), (server, r, lease) -> server.tryAcquire(r.name(), r.ownerId(),
                        Duration.ofDays(1).toNanos())) {
                    @Override
                    public List<RenewOutcome> renew(List<Grant<Void>> locks) {
                        return renewFor(this, locks, l -> Duration.ofDays(1).toNanos());
                    }
                });
        add("early-takeover", "a waiter takes over a lock whose holder it has seen unchanged for half a lease, "
                + "counting from its own first sighting as if that were the holder's last renewal", rules(Rule.S7, Rule.L2), rules(Rule.S10, Rule.L11, Rule.N1, Rule.E2),
                c -> {
                    Map<String, long[]> seen = new ConcurrentHashMap<>(); // name -> {token, first sighting, lease end}
                    return granting(c, Set.of(), (server, r, lease) -> {
                        Optional<LockHolder> h = server.holder(r.name());
                        long now = System.nanoTime();
                        if (h.isPresent()) {
                            // what the waiter can see of the holder: its token and when its lease ends; a renewal
                            // moves the end, and starts the sighting over
                            long ends = now + h.get().remaining().orElse(Duration.ZERO).toNanos();
                            long[] first = seen.compute(r.name(), (k, v) -> v != null && v[0] == h.get().fencingToken()
                                    && Math.abs(v[2] - ends) < lease / 10 ? v : new long[] {h.get().fencingToken(), now, ends});
                            if (now - first[1] >= lease / 2) {
                                server.forceRelease(r.name());
                            }
                        }
                        return server.tryAcquire(r.name(), r.ownerId(), lease);
                    });
                });
        add("wall-clock-expiry", "a waiter decides that a lock expired by comparing its own wall clock with the "
                + "expiry time the holder wrote from its wall clock", rules(Rule.S10),
                c -> new Forwarding(c.real()) {
                    @Override
                    public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
                        return new CustomGrant(this, request) {
                            @Override
                            long grant(MemServer server, long leaseNanos) {
                                long mine = c.context().clock().millis();
                                Long theirs = WALL_EXPIRY.get(request.name());
                                if (theirs != null && mine >= theirs) {
                                    server.forceRelease(request.name()); // expired, by the clocks' say-so
                                }
                                long r = server.tryAcquire(request.name(), request.ownerId(), leaseNanos);
                                if (r > 0) {
                                    WALL_EXPIRY.put(request.name(), mine + leaseNanos / 1_000_000);
                                }
                                return r;
                            }
                        };
                    }

                    @Override
                    public List<RenewOutcome> renew(List<Grant<Void>> locks) {
                        List<RenewOutcome> r = real.renew(locks);
                        for (int i = 0; i < r.size(); i++) {
                            if (r.get(i) instanceof RenewOutcome.Renewed) {
                                WALL_EXPIRY.put(locks.get(i).name(), c.context().clock().millis() + locks.get(i).leaseTime().toMillis());
                            }
                        }
                        return r;
                    }
                });
        add("check-then-set", "the acquire reads the lock, and writes its grant in a second request if it was free: "
                + "two contenders can both find it free", rules(Rule.S1, Rule.S2), rules(Rule.N1, Rule.E1),
                c -> granting(c, Set.of(), (server, r, lease) -> {
                    if (server.holder(r.name()).isPresent()) {
                        return server.tryAcquire(r.name(), r.ownerId(), lease); // busy: answered as usual
                    }
                    try {
                        Thread.sleep(5); // the second request's round trip
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    server.forceRelease(r.name()); // "it was free": write over whatever is there now
                    return server.tryAcquire(r.name(), r.ownerId(), lease);
                }));
        add("keyed-by-connection", "a request from the connection that holds a lock is granted it again",
                rules(Rule.S5),
                c -> {
                    Set<String> mine = ConcurrentHashMap.newKeySet();
                    return new Forwarding(c.real()) {
                        @Override
                        public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
                            return new CustomGrant(this, request) {
                                @Override
                                long grant(MemServer server, long leaseNanos) {
                                    Optional<LockHolder> h = server.holder(request.name());
                                    if (h.isPresent() && mine.contains(h.get().ownerId())) {
                                        server.forceRelease(request.name()); // "it is ours already"
                                    }
                                    long r = server.tryAcquire(request.name(), request.ownerId(), leaseNanos);
                                    if (r > 0) {
                                        mine.add(request.ownerId());
                                    }
                                    return r;
                                }
                            };
                        }
                    };
                });
        add("grant-in-await", "the server hands the lock to a waiter while it waits for its turn, and the grant is "
                + "reported on a try at least 150 ms later without its earlier start", rules(Rule.S7), rules(Rule.L1),
                c -> new Forwarding(c.real()) {
                    @Override
                    public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
                        return new CustomGrant(this, request) {
                            private long pending; // guarded by this
                            private long pendingSince; // guarded by this
                            private boolean gone; // guarded by this: abandoned, or granted

                            @Override
                            long grant(MemServer server, long leaseNanos) {
                                synchronized (this) {
                                    if (pending > 0) {
                                        long held = System.nanoTime() - pendingSince;
                                        long hold = TimeUnit.MILLISECONDS.toNanos(150);
                                        if (held < hold) {
                                            return -(hold - held); // busy: the grant is collected after the rest of the wait
                                        }
                                        long t = pending;
                                        pending = 0;
                                        gone = true;
                                        return t;
                                    }
                                }
                                long t = server.tryAcquire(request.name(), request.ownerId(), leaseNanos);
                                if (t > 0) {
                                    synchronized (this) {
                                        gone = true;
                                    }
                                }
                                return t;
                            }

                            @Override
                            public CompletionStage<Void> turn(Duration maxWait) {
                                CompletionStage<Void> released = super.turn(maxWait);
                                released.whenComplete((v, e) -> {
                                    synchronized (this) {
                                        if (!gone && pending == 0 && !real.link.isFrozen()) {
                                            long t = server().tryAcquire(request.name(), request.ownerId(),
                                                    request.leaseTime().toNanos());
                                            if (t > 0) {
                                                pendingSince = System.nanoTime();
                                                pending = t; // granted now, on the notification; reported later
                                            }
                                        }
                                    }
                                });
                                return new CompletableFuture<>(); // the next try comes on the core's timer
                            }

                            @Override
                            public void abandon() {
                                long t;
                                synchronized (this) {
                                    gone = true;
                                    t = pending;
                                    pending = 0;
                                }
                                if (t > 0) {
                                    server().release(request.name(), request.ownerId(), t); // not this mutant's bug
                                }
                                super.abandon();
                            }
                        };
                    }
                });

        // ---- abandon
        add("abandon-noop", "abandon() does nothing, so a grant whose answer was lost stays until it expires",
                rules(Rule.S4),
                c -> new Forwarding(c.real()) {
                    @Override
                    public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
                        return new ForwardingAttempt(real.newAttempt(request)) {
                            @Override
                            public void abandon() {
                            }
                        };
                    }
                });
        add("abandon-unconditional", "abandon() deletes the lock whoever holds it", rules(Rule.S3, Rule.S4, Rule.S5, Rule.V2, Rule.B2, Rule.B3), rules(Rule.S7, Rule.S10, Rule.L3, Rule.L4, Rule.L11, Rule.N1),
                c -> new Forwarding(c.real()) {
                    @Override
                    public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
                        return new ForwardingAttempt(real.newAttempt(request)) {
                            @Override
                            public void abandon() {
                                try {
                                    call(request.name(), () -> server().forceRelease(request.name()));
                                } catch (RuntimeException ignored) {
                                    // best effort
                                }
                            }
                        };
                    }
                });
        add("session-keeps-strays", "every lock is kept alive by its connection's session, which a keep-alive thread "
                + "refreshes while the client is open, and abandon() does not delete a grant whose answer was lost: the "
                + "stray lives as long as the client", rules(Rule.S4, Rule.N2), rules(Rule.S10, Rule.N1),
                c -> {
                    String session = Long.toHexString(System.nanoTime()) + ":";
                    long lease = c.context().config().defaultLockOptions().leaseTime().toNanos();
                    // the grants the core heard of are renewed and released by the core; the session keeps the rest
                    // (grants whose answer was lost) alive for as long as the client is open
                    Set<String> heard = ConcurrentHashMap.newKeySet();
                    Thread keepAlive = new Thread(() -> {
                        while (!Thread.currentThread().isInterrupted()) {
                            try {
                                Thread.sleep(Math.max(1, lease / 3_000_000));
                                c.real().link.call(null, () -> {
                                    c.real().server.renewAllOf(session, lease, heard);
                                    return null;
                                });
                            } catch (InterruptedException e) {
                                return;
                            } catch (LockBackendException e) {
                                // the session is refreshed again on the next round
                            }
                        }
                    }, "dlock-tck-broken-session");
                    keepAlive.setDaemon(true);
                    keepAlive.start();
                    return new Forwarding(c.real()) {
                        private Grant<Void> onSession(Grant<Void> l) {
                            return mapped(l, l.name(), session + l.ownerId(), l.fencingToken());
                        }

                        @Override
                        public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
                            AcquireRequest onSession = new AcquireRequest(request.name(), session + request.ownerId(),
                                    request.leaseTime());
                            return new ForwardingAttempt(real.newAttempt(onSession)) {
                                @Override
                                public AttemptResult<Void> tryOnce() {
                                    AttemptResult<Void> r = super.tryOnce();
                                    if (r instanceof AttemptResult.Granted) {
                                        heard.add(onSession.ownerId());
                                    }
                                    return r;
                                }

                                @Override
                                public void abandon() {
                                }
                            };
                        }

                        @Override
                        public List<RenewOutcome> renew(List<Grant<Void>> locks) {
                            List<Grant<Void>> mapped = new ArrayList<>();
                            locks.forEach(l -> mapped.add(onSession(l)));
                            return real.renew(mapped);
                        }

                        @Override
                        public ReleaseOutcome release(Grant<Void> l) {
                            return real.release(onSession(l));
                        }

                        @Override
                        public Optional<LockHolder> holder(String name) {
                            return real.holder(name).map(h -> new LockHolder(name,
                                    h.ownerId().substring(h.ownerId().indexOf(':') + 1), h.fencingToken(),
                                    h.remaining().orElse(null)));
                        }

                        @Override
                        public void close() {
                            keepAlive.interrupt();
                            real.close();
                        }
                    };
                });

        // ---- waiting
        add("wait", "turn blocks until a release, up to 5 s, instead of returning its stage at once", rules(Rule.L4),
                c -> new Forwarding(c.real()) {
                    @Override
                    public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
                        return new ForwardingAttempt(real.newAttempt(request)) {
                            @Override
                            public CompletionStage<Void> turn(Duration maxWait) {
                                try {
                                    real.server.awaitChange(request.name(), Duration.ofSeconds(5).toNanos());
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                }
                                return CompletableFuture.completedFuture(null);
                            }
                        };
                    }
                });
        add("thread-per-wait", "each wait runs on a thread of its own that blocks until a release and then completes "
                + "the stage, as a naive adapter of a blocking client would", rules(Rule.L10, Rule.L11),
                c -> new Forwarding(c.real()) {
                    @Override
                    public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
                        return new ForwardingAttempt(real.newAttempt(request)) {
                            @Override
                            public CompletionStage<Void> turn(Duration maxWait) {
                                CompletableFuture<Void> stage = new CompletableFuture<>();
                                Thread waiter = new Thread(() -> {
                                    try {
                                        real.server.awaitChange(request.name(), maxWait.toNanos());
                                    } catch (InterruptedException e) {
                                        Thread.currentThread().interrupt(); // ends the helper
                                    }
                                    stage.complete(null);
                                }, "broken-wait-" + request.name());
                                waiter.setDaemon(true);
                                waiter.start();
                                return stage;
                            }
                        };
                    }
                });
        add("no-notify", "declares NOTIFY_WAITERS, but waiters only poll", rules(Rule.L1), rules(Rule.L8),
                c -> polling(c, true));
        add("poll-unfair", "waiters poll and a client that releases and asks again at once always wins",
                rules(Rule.L8), c -> polling(c, false));
        add("claims-fair", "declares FAIR, but a waiter backs off longer the longer it has waited, so the newest "
                + "waiter wins", rules(Rule.L5), rules(Rule.L8),
                c -> new Granting(c, Set.of(Capability.FAIR), (server, r, lease) -> server.tryAcquire(r.name(),
                        r.ownerId(), lease)) {
                    @Override
                    public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
                        AcquireAttempt<Void> grants = super.newAttempt(request);
                        long arrived = System.nanoTime();
                        return new ForwardingAttempt(grants) {
                            @Override
                            public CompletionStage<Void> turn(Duration maxWait) {
                                long waited = System.nanoTime() - arrived;
                                long lag = Math.min(Math.min(200, maxWait.toMillis()), waited / 4_000_000);
                                CompletableFuture<Void> late = new CompletableFuture<>();
                                super.turn(maxWait).whenComplete((v, e) -> CompletableFuture.runAsync(
                                        () -> late.complete(null),
                                        CompletableFuture.delayedExecutor(lag, TimeUnit.MILLISECONDS)));
                                return late;
                            }
                        };
                    }
                });

        // ---- names
        add("names-case-folded", "lock names are lower-cased on the server", rules(Rule.S6),
                c -> renaming(c, n -> n.toLowerCase(Locale.ROOT)));
        add("names-truncated", "lock names are cut to 200 characters on the server", rules(Rule.S6),
                c -> renaming(c, n -> n.length() > 200 ? n.substring(0, 200) : n));
        add("names-escape-collision", "'/' is escaped as '%2F' but '%' itself is not escaped", rules(Rule.S6),
                c -> renaming(c, n -> n.replace("/", "%2F")));

        // ---- holder query
        add("holder-cached", "holder() answers from a cache kept for five seconds", rules(Rule.L2, Rule.E4),
                c -> {
                    Map<String, Object[]> cache = new ConcurrentHashMap<>();
                    return new Forwarding(c.real()) {
                        @Override
                        @SuppressWarnings("unchecked")
                        public Optional<LockHolder> holder(String name) {
                            Object[] hit = cache.get(name);
                            if (hit != null && System.nanoTime() - (Long) hit[0] < Duration.ofSeconds(5).toNanos()) {
                                return (Optional<LockHolder>) hit[1];
                            }
                            Optional<LockHolder> h = real.holder(name);
                            cache.put(name, new Object[] {System.nanoTime(), h});
                            return h;
                        }
                    };
                });
        add("holder-wrong-token", "holder() reports a token one higher than the holder's", rules(Rule.E4),
                c -> new Forwarding(c.real()) {
                    @Override
                    public Optional<LockHolder> holder(String name) {
                        return real.holder(name).map(h -> new LockHolder(name, h.ownerId(), h.fencingToken() + 1,
                                h.remaining().orElse(null)));
                    }
                });

        // ---- failures, limits and resources
        add("hangs-when-frozen", "calls wait for an answer for 20 s, whatever the operation timeout",
                rules(Rule.V3),
                c -> {
                    MemLockProvider.MemBackend patient = new MemLockProvider.MemBackend(c.real().server,
                            java.util.UUID.randomUUID().toString(), Duration.ofSeconds(20));
                    c.real().close();
                    String link = c.context().uri().param("link").orElse(null);
                    if (link != null) {
                        // the fixture freezes the link registered under the URI's id: make it this one
                        c.real().server.register(link, patient.link);
                    }
                    return new Forwarding(patient);
                });
        add("wrong-exception", "a call that gets no answer throws IllegalStateException, not LockBackendException",
                rules(Rule.V3), rules(Rule.S4, Rule.S7, Rule.N1, Rule.N2),
                tryOnceFailing((request, e) -> e instanceof LockConfigurationException ? e
                        : new IllegalStateException("no answer", e)));
        add("configuration-as-transient", "the server's refusal of the credentials is reported as a plain, retryable "
                + "LockBackendException", rules(Rule.V4),
                tryOnceFailing((request, e) -> e instanceof LockConfigurationException
                        ? new LockBackendException(e.getMessage(), request.name(), e.getCause()) : e));
        add("no-answer-as-configuration", "a call that gets no answer is reported as a LockConfigurationException, "
                + "which says no retry can help", rules(Rule.V3),
                tryOnceFailing((request, e) -> e instanceof LockConfigurationException ? e
                        : new LockConfigurationException(LockConfigurationException.Kind.INCOMPATIBLE_SERVER,
                                "the server did not answer: " + e.getMessage(), request.name(), e)));
        add("close-waits-for-network", "close() says goodbye to the server and waits for its answer without a timeout",
                rules(Rule.L9),
                c -> new Forwarding(c.real()) {
                    @Override
                    public void close() {
                        try {
                            while (real.link.isFrozen()) {
                                Thread.sleep(10);
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        real.close();
                    }
                });
        add("leaks-thread", "close() leaves the backend's keep-alive thread running", rules(Rule.L7),
                c -> {
                    Thread keepAlive = new Thread(() -> {
                        while (true) {
                            try {
                                Thread.sleep(50);
                            } catch (InterruptedException e) {
                                return;
                            }
                        }
                    }, "broken-keepalive");
                    keepAlive.setDaemon(true);
                    keepAlive.start();
                    return new Forwarding(c.real());
                });
        add("no-minimum-lease", "declares no minimum lease time, so a lease of a nanosecond is accepted", rules(Rule.V1),
                c -> new Forwarding(c.real()) {
                    @Override
                    public Duration minimumLeaseTime() {
                        return Duration.ofNanos(1);
                    }
                });
        add("no-maximum-lease", "declares no maximum lease time, so a lease of a thousand years is accepted",
                rules(Rule.V1),
                c -> new Forwarding(c.real()) {
                    @Override
                    public Duration maximumLeaseTime() {
                        return Duration.ofDays(365_000);
                    }
                });
        add("no-lock-delay", "after a restart that lost its locks, the server grants at once", rules(Rule.S11),
                c -> granting(c, Set.of(), (server, r, lease) -> server.tryAcquire(r.name(), r.ownerId(), lease, false)));
        add("claims-failover", "declares SURVIVES_SERVER_FAILOVER, but a new leader that missed the locks grants "
                + "them at once", rules(Rule.S9, Rule.S11),
                c -> granting(c, Set.of(Capability.SURVIVES_SERVER_FAILOVER),
                        (server, r, lease) -> server.tryAcquire(r.name(), r.ownerId(), lease, false)));
    }

    private static final Map<String, Long> WALL_EXPIRY = new ConcurrentHashMap<>();
}
