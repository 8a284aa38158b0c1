package io.dlock.internal;

import io.dlock.Capability;
import io.dlock.LockBackendException;
import io.dlock.LockHolder;
import io.dlock.Ticker;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.RenewOutcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * An in-memory backend for unit tests of the core (not a backend under test): one "server" per
 * instance, whose clock is the client's ticker. It honours the SPI contract: owner-checked
 * release and renew, server-side expiry after the lease time, tokens strictly increasing. Knobs
 * make it fail, answer "not owner", block, or take time; counters record what the core did. Its
 * per-grant state is the string {@code state-TOKEN}, checked on every renew and release.
 */
public final class FakeBackend implements LockBackend<String> {

    /** How {@link AcquireAttempt#turn} passes the time. */
    public enum AwaitMode {
        /**
         * Passes {@code maxWait} through {@link #sleeper} at once (fake time, no real waiting) and
         * answers a completed stage.
         */
        ADVANCE,
        /**
         * Answers a stage that completes when the lock is released (or the backend closes); the
         * core's timer bounds the wait. A lock that merely expires on the server is not notified.
         */
        REAL
    }

    private static final class Entry {
        final String owner;
        final long token;
        final String state;
        long expiresAt;

        Entry(String owner, long token, String state, long expiresAt) {
            this.owner = owner;
            this.token = token;
            this.state = state;
            this.expiresAt = expiresAt;
        }
    }

    private final Ticker ticker;
    private final Map<String, Entry> locks = new HashMap<>(); // guarded by this
    /** The stages of REAL-mode turns, completed by the next release. */
    private final List<CompletableFuture<Void>> turns = new ArrayList<>(); // guarded by this
    private long lastToken; // guarded by this
    private int otherOwners; // guarded by this

    // ---- knobs ----
    public volatile AwaitMode awaitMode = AwaitMode.ADVANCE;
    /** How ADVANCE mode lets time pass; by default it moves a {@link FakeTicker}. */
    public volatile Consumer<Duration> sleeper;
    public volatile Duration tryOnceRtt = Duration.ZERO;
    /** When set, grants say their server-side lease started at this ticker reading (a shared lease). */
    public volatile Long leaseStartNanos;
    public volatile Duration renewRtt = Duration.ZERO;
    public volatile Supplier<RuntimeException> tryOnceFailure;
    /** Grant on the server, then throw as if the answer was lost. */
    public volatile boolean grantThenFail;
    public volatile Duration busyHint;
    public volatile CountDownLatch tryOnceGate;
    public final CountDownLatch tryOnceEntered = new CountDownLatch(1);
    public volatile CountDownLatch renewGate;
    public final CountDownLatch renewEntered = new CountDownLatch(1);
    public volatile boolean renewThrows;
    /** When set, renewals throw what it supplies (ahead of {@link #renewThrows}). */
    public volatile Supplier<RuntimeException> renewFailure;
    public volatile boolean renewAnswersWrongLength;
    /** Renewals answer a list of the right size whose first element is null. */
    public volatile boolean renewAnswersANullOutcome;
    public volatile Predicate<String> renewNotOwner = n -> false;
    /** Names whose renewal answers unknown (a partial failure of the batch); the rest renew. */
    public volatile Predicate<String> renewUnknown = n -> false;
    public volatile boolean releaseThrows;
    /** When set, every release waits for it to open (releases in flight are counted meanwhile). */
    public volatile CountDownLatch releaseGate;
    public final AtomicInteger releasesInFlight = new AtomicInteger();
    public final AtomicInteger maxReleasesInFlight = new AtomicInteger();
    /**
     * When set, every release hangs this long in real time, deaf to interrupts (a socket read on a
     * black-holed network), then fails as a timeout; {@link #releaseStallEnd} cuts the hangs short.
     * Releases in flight are counted meanwhile.
     */
    public volatile Duration releaseStall;
    public final CountDownLatch releaseStallEnd = new CountDownLatch(1);
    /** Like a future-based client: I/O on an interrupted thread fails. */
    public volatile boolean interruptSensitive;
    public volatile Runnable onTurn;
    public volatile Runnable onTryOnce;
    /** Runs with the owner id after a grant is made on the server, before tryOnce answers. */
    public volatile Consumer<String> onGranted;
    /** Runs at the start of every abandon(), on the thread that abandons. */
    public volatile Runnable onAbandon;
    public volatile Set<Capability> capabilities = EnumSet.of(Capability.FENCING);
    public volatile Duration minimumLeaseTime = Duration.ofMillis(10);
    public volatile Duration maximumLeaseTime = Duration.ofDays(365);

    // ---- records ----
    public final AtomicInteger tryOnceCalls = new AtomicInteger();
    public final AtomicInteger turnCalls = new AtomicInteger();
    public final AtomicInteger abandonCalls = new AtomicInteger();
    public final AtomicInteger releaseCalls = new AtomicInteger();
    public final AtomicInteger releasesThatFreed = new AtomicInteger();
    public final AtomicInteger stateMismatches = new AtomicInteger();
    public final List<AcquireRequest> requests = Collections.synchronizedList(new ArrayList<>());
    public final List<List<String>> renewCalls = Collections.synchronizedList(new ArrayList<>());
    public final List<Long> renewCallTimes = Collections.synchronizedList(new ArrayList<>());
    /** The threads renewals and tries ran on, by name. */
    public final List<String> renewThreads = Collections.synchronizedList(new ArrayList<>());
    public final List<String> tryOnceThreads = Collections.synchronizedList(new ArrayList<>());
    public final List<Duration> turnWaits = Collections.synchronizedList(new ArrayList<>());
    public final List<Long> grantedTokens = Collections.synchronizedList(new ArrayList<>());
    private final ConcurrentHashMap<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
    public final AtomicInteger maxInFlightPerName = new AtomicInteger();
    public volatile BackendContext context;
    public volatile boolean closed;
    private volatile Thread sessionThread;

    public FakeBackend(Ticker ticker) {
        this.ticker = ticker;
        if (ticker instanceof FakeTicker) {
            FakeTicker fake = (FakeTicker) ticker;
            this.sleeper = fake::advance;
        } else {
            this.awaitMode = AwaitMode.REAL;
        }
    }

    /** Remembers the context the core opened this backend with. */
    public FakeBackend attach(BackendContext ctx) {
        this.context = ctx;
        return this;
    }

    /** Starts a background thread from the core's factory, stopped by {@link #close()}. */
    public FakeBackend startSessionThread(ThreadFactory factory) {
        Thread t = factory.newThread(() -> {
            synchronized (this) {
                while (!closed) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        });
        sessionThread = t;
        t.start();
        return this;
    }

    // ---- server state ----

    private long now() {
        return ticker.nanoTime();
    }

    private Entry live(String name) { // caller holds this
        Entry e = locks.get(name);
        if (e != null && e.expiresAt - now() <= 0) {
            locks.remove(name);
            return null;
        }
        return e;
    }

    private synchronized long grant(AcquireRequest r) {
        if (live(r.name()) != null) {
            return -1;
        }
        long token = ++lastToken;
        locks.put(r.name(), new Entry(r.ownerId(), token, "state-" + token, now() + r.leaseTime().toNanos()));
        grantedTokens.add(token);
        return token;
    }

    private boolean releaseIfOwner(String name, String owner) {
        synchronized (this) {
            Entry e = live(name);
            if (e == null || !e.owner.equals(owner)) {
                return false;
            }
            locks.remove(name);
        }
        changed();
        return true;
    }

    /** Completes the waiting turns' stages, outside the monitor (the core may try again at once). */
    private void changed() {
        List<CompletableFuture<Void>> waiting;
        synchronized (this) {
            waiting = new ArrayList<>(turns);
            turns.clear();
        }
        waiting.forEach(f -> f.complete(null));
    }

    /** Another client takes the lock for {@code lease}; returns its token, or -1 if held. */
    public synchronized long grabAsOther(String name, Duration lease) {
        if (live(name) != null) {
            return -1;
        }
        long token = ++lastToken;
        locks.put(name, new Entry("other-" + (++otherOwners), token, null, now() + lease.toNanos()));
        return token;
    }

    /** Whoever holds the lock on the server lets it go. */
    public void forceFree(String name) {
        synchronized (this) {
            locks.remove(name);
        }
        changed();
    }

    /** Another client's hold on the lock ends (this client's never). */
    public void releaseOther(String name) {
        synchronized (this) {
            Entry e = locks.get(name);
            if (e == null || !e.owner.startsWith("other-")) {
                return;
            }
            locks.remove(name);
        }
        changed();
    }

    /** @return the owner id holding the lock on the server now, if any */
    public synchronized Optional<String> serverOwner(String name) {
        Entry e = live(name);
        return e == null ? Optional.empty() : Optional.of(e.owner);
    }

    /** @return how many names are held on the server */
    public synchronized int serverHeldCount() {
        int n = 0;
        for (String name : new ArrayList<>(locks.keySet())) {
            if (live(name) != null) {
                n++;
            }
        }
        return n;
    }

    private void enter(String name) {
        int n = inFlight.computeIfAbsent(name, k -> new AtomicInteger()).incrementAndGet();
        maxInFlightPerName.accumulateAndGet(n, Math::max);
    }

    private void exit(String name) {
        inFlight.get(name).decrementAndGet();
    }

    private void advance(Duration d) {
        if (!d.isZero()) {
            ((FakeTicker) ticker).advance(d);
        }
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private static void awaitUninterruptibly(CountDownLatch latch, Duration max) {
        long end = System.nanoTime() + max.toNanos();
        boolean interrupted = false;
        while (true) {
            try {
                latch.await(Math.max(0, end - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS);
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void checkState(Grant<String> lock, Entry e) {
        if (e != null && e.owner.equals(lock.ownerId()) && !java.util.Objects.equals(e.state, lock.state())) {
            stateMismatches.incrementAndGet();
        }
    }

    // ---- SPI ----

    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    @Override
    public Duration minimumLeaseTime() {
        return minimumLeaseTime;
    }

    @Override
    public Duration maximumLeaseTime() {
        return maximumLeaseTime;
    }

    @Override
    public AcquireAttempt<String> newAttempt(AcquireRequest request) {
        requests.add(request);
        return new Attempt(request);
    }

    private final class Attempt implements AcquireAttempt<String> {
        private final AcquireRequest request;

        Attempt(AcquireRequest request) {
            this.request = request;
        }

        @Override
        public AttemptResult<String> tryOnce() {
            String name = request.name();
            enter(name);
            try {
                tryOnceCalls.incrementAndGet();
                tryOnceThreads.add(Thread.currentThread().getName());
                CountDownLatch gate = tryOnceGate;
                if (gate != null) {
                    tryOnceEntered.countDown();
                    awaitUninterruptibly(gate);
                }
                Runnable hook = onTryOnce;
                if (hook != null) {
                    hook.run();
                }
                Duration rtt = tryOnceRtt;
                advance(rtt.dividedBy(2)); // the request travels, the server decides, the answer travels
                Supplier<RuntimeException> failure = tryOnceFailure;
                if (failure != null) {
                    throw failure.get();
                }
                long token = grant(request);
                advance(rtt.minus(rtt.dividedBy(2)));
                if (grantThenFail) {
                    throw new LockBackendException("the answer to an acquire of '" + name + "' was lost", name, null);
                }
                Long leaseStart = leaseStartNanos;
                Consumer<String> granted = onGranted;
                if (token > 0 && granted != null) {
                    granted.accept(request.ownerId());
                }
                if (token > 0) {
                    return leaseStart == null ? AttemptResult.granted(token, "state-" + token)
                            : AttemptResult.granted(token, "state-" + token, leaseStart);
                }
                return AttemptResult.busy(busyHint);
            } finally {
                exit(name);
            }
        }

        @Override
        public CompletionStage<Void> turn(Duration maxWait) {
            String name = request.name();
            enter(name);
            try {
                turnCalls.incrementAndGet();
                turnWaits.add(maxWait);
                Runnable hook = onTurn;
                if (hook != null) {
                    hook.run();
                }
                if (awaitMode == AwaitMode.ADVANCE) {
                    sleeper.accept(maxWait);
                    return CompletableFuture.completedFuture(null);
                }
                CompletableFuture<Void> f = new CompletableFuture<>();
                synchronized (FakeBackend.this) {
                    if (closed || live(name) == null) {
                        f.complete(null);
                    } else {
                        turns.removeIf(CompletableFuture::isDone);
                        turns.add(f);
                    }
                }
                return f;
            } finally {
                exit(name);
            }
        }

        @Override
        public void abandon() {
            Runnable hook = onAbandon;
            if (hook != null) {
                hook.run();
            }
            abandonCalls.incrementAndGet();
            if (interruptSensitive && Thread.currentThread().isInterrupted()) {
                return; // the clean-up request failed at once; best effort, never throws
            }
            releaseIfOwner(request.name(), request.ownerId());
        }
    }

    @Override
    public List<RenewOutcome> renew(List<Grant<String>> batch) {
        List<String> names = new ArrayList<>();
        for (Grant<String> l : batch) {
            names.add(l.name());
        }
        renewCalls.add(names);
        renewCallTimes.add(now());
        renewThreads.add(Thread.currentThread().getName());
        CountDownLatch gate = renewGate;
        if (gate != null) {
            renewEntered.countDown();
            awaitUninterruptibly(gate);
        }
        Duration rtt = renewRtt;
        advance(rtt.dividedBy(2));
        if (interruptSensitive && Thread.currentThread().isInterrupted()) {
            throw new LockBackendException("interrupted", null, null);
        }
        Supplier<RuntimeException> renewFailure = this.renewFailure;
        if (renewFailure != null) {
            throw renewFailure.get();
        }
        if (renewThrows) {
            throw new LockBackendException("renewal failed (injected)", null, null);
        }
        if (renewAnswersWrongLength) {
            List<RenewOutcome> wrong = new ArrayList<>();
            for (int i = 0; i <= batch.size(); i++) {
                wrong.add(RenewOutcome.renewed());
            }
            return wrong;
        }
        if (renewAnswersANullOutcome) {
            List<RenewOutcome> withNull = new ArrayList<>(Collections.nCopies(batch.size(), RenewOutcome.renewed()));
            withNull.set(0, null);
            return withNull;
        }
        List<RenewOutcome> out = new ArrayList<>(batch.size());
        synchronized (this) {
            for (Grant<String> l : batch) {
                Entry e = live(l.name());
                checkState(l, e);
                if (renewUnknown.test(l.name())) {
                    out.add(RenewOutcome.unknown(new LockBackendException("no answer for the renewal of '" + l.name()
                            + "' (injected)", l.name(), null)));
                } else if (renewNotOwner.test(l.name()) || e == null || !e.owner.equals(l.ownerId())) {
                    out.add(RenewOutcome.notHeld());
                } else {
                    e.expiresAt = now() + l.leaseTime().toNanos();
                    out.add(RenewOutcome.renewed());
                }
            }
        }
        advance(rtt.minus(rtt.dividedBy(2)));
        return List.copyOf(out); // immutable, as most backends answer (its contains(null) throws)
    }

    @Override
    public ReleaseOutcome release(Grant<String> lock) {
        releaseCalls.incrementAndGet();
        Duration stall = releaseStall;
        if (stall != null) {
            maxReleasesInFlight.accumulateAndGet(releasesInFlight.incrementAndGet(), Math::max);
            try {
                awaitUninterruptibly(releaseStallEnd, stall);
            } finally {
                releasesInFlight.decrementAndGet();
            }
            throw new LockBackendException("no answer to the release of '" + lock.name() + "' within " + stall,
                    lock.name(), null);
        }
        CountDownLatch gate = releaseGate;
        if (gate != null) {
            maxReleasesInFlight.accumulateAndGet(releasesInFlight.incrementAndGet(), Math::max);
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockBackendException("interrupted while releasing '" + lock.name() + "'", lock.name(), e);
            } finally {
                releasesInFlight.decrementAndGet();
            }
        }
        if (interruptSensitive && Thread.currentThread().isInterrupted()) {
            throw new LockBackendException("interrupted while releasing '" + lock.name() + "'", lock.name(), null);
        }
        if (releaseThrows) {
            throw new LockBackendException("release failed (injected)", lock.name(), null);
        }
        synchronized (this) {
            checkState(lock, live(lock.name()));
        }
        boolean freed = releaseIfOwner(lock.name(), lock.ownerId());
        if (freed) {
            releasesThatFreed.incrementAndGet();
        }
        return freed ? ReleaseOutcome.RELEASED : ReleaseOutcome.NOT_HELD;
    }

    @Override
    public Optional<LockHolder> holder(String name) {
        if (!capabilities.contains(Capability.HOLDER_QUERY)) {
            return LockBackend.super.holder(name);
        }
        synchronized (this) {
            Entry e = live(name);
            return e == null ? Optional.empty()
                    : Optional.of(new LockHolder(name, e.owner, e.token, Duration.ofNanos(e.expiresAt - now())));
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            notifyAll(); // the session thread
        }
        changed();
        Thread t = sessionThread;
        if (t != null) {
            t.interrupt();
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
