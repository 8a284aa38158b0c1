package io.dlock.tck.example;

import io.dlock.Capability;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.RenewOutcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The example provider of docs/TCK.md, {@code example://STORE}: an in-memory lock store shared by
 * the clients of one JVM that open the same STORE. Its per-grant state is the store's entry itself,
 * so renew and release check ownership by identity, with no cast. The first waiter refused takes a
 * ticket that a fresh request must respect, so no waiter starves. Every call is one atomic map
 * operation: nothing blocks, so every call ends at once, and no answer is ever lost.
 */
public final class ExampleProvider implements LockProvider {

    /** One grant of a lock: a new grant is a new entry, so identity is ownership. */
    public static final class Entry {
        final long token;
        volatile long expiresAt; // System.nanoTime(); written inside the map's compute only

        Entry(long token, long expiresAt) {
            this.token = token;
            this.expiresAt = expiresAt;
        }
    }

    /** A lock in a store: its grant (null or expired when free), and the owner id next in line. */
    private record Slot(Entry held, String waiter, long waiterSeenAt) { }

    /** A store: its locks by name and its token counter. */
    private record Store(Map<String, Slot> locks, AtomicLong tokens) { }

    /** A waiter that has not asked again for this long (the core asks at least every second) gave up. */
    private static final long STALE_WAITER = Duration.ofSeconds(3).toNanos();

    private static final Map<String, Store> STORES = new ConcurrentHashMap<>();

    /** For ServiceLoader. */
    public ExampleProvider() { }

    @Override
    public String name() {
        return "example";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("example");
    }

    @Override
    public LockBackend<Entry> open(BackendContext context) {
        if (context == null) {
            throw new IllegalArgumentException("context must not be null");
        }
        String store = context.uri().hosts().isEmpty() ? "default" : context.uri().hosts().get(0).host();
        return new Backend(STORES.computeIfAbsent(store, s -> new Store(new ConcurrentHashMap<>(), new AtomicLong())));
    }

    private static final class Backend implements LockBackend<Entry> {
        private final Store store;

        Backend(Store store) {
            this.store = store;
        }

        @Override
        public Set<Capability> capabilities() {
            return EnumSet.of(Capability.FENCING);
        }

        @Override
        public AcquireAttempt<Entry> newAttempt(AcquireRequest request) {
            return new AcquireAttempt<>() {
                @Override
                public AttemptResult<Entry> tryOnce() {
                    long now = System.nanoTime();
                    String me = request.ownerId();
                    Entry[] mine = new Entry[1];
                    store.locks().compute(request.name(), (name, slot) -> {
                        boolean free = slot == null || slot.held() == null || slot.held().expiresAt - now <= 0;
                        boolean myTurn = slot == null || slot.waiter() == null || slot.waiter().equals(me)
                                || now - slot.waiterSeenAt() > STALE_WAITER;
                        if (free && myTurn) {
                            mine[0] = new Entry(store.tokens().incrementAndGet(), now + request.leaseTime().toNanos());
                            return new Slot(mine[0], null, 0);
                        }
                        return myTurn ? new Slot(slot.held(), me, now) : slot; // busy: next in line, or behind
                    });
                    return mine[0] == null ? AttemptResult.busy() : AttemptResult.granted(mine[0].token, mine[0]);
                }

                // turn(maxWait): the default. The store cannot notify a waiter, so the core's timer paces the tries

                @Override
                public void abandon() {
                    // give up the place in line; tryOnce never leaves a grant whose answer was lost
                    store.locks().computeIfPresent(request.name(), (name, slot) -> request.ownerId().equals(
                            slot.waiter()) ? new Slot(slot.held(), null, 0) : slot);
                }
            };
        }

        @Override
        public List<RenewOutcome> renew(List<Grant<Entry>> grants) {
            List<RenewOutcome> out = new ArrayList<>(grants.size());
            for (Grant<Entry> grant : grants) {
                long now = System.nanoTime();
                boolean[] renewed = {false};
                store.locks().computeIfPresent(grant.name(), (name, slot) -> {
                    if (slot.held() == grant.state() && slot.held().expiresAt - now > 0) {
                        slot.held().expiresAt = now + grant.leaseTime().toNanos();
                        renewed[0] = true;
                    }
                    return slot;
                });
                out.add(renewed[0] ? RenewOutcome.renewed() : RenewOutcome.notHeld());
            }
            return out;
        }

        @Override
        public ReleaseOutcome release(Grant<Entry> grant) {
            long now = System.nanoTime();
            boolean[] released = {false};
            store.locks().computeIfPresent(grant.name(), (name, slot) -> {
                if (slot.held() != grant.state()) {
                    return slot; // another grant's: leave it alone
                }
                released[0] = slot.held().expiresAt - now > 0;
                return new Slot(null, slot.waiter(), slot.waiterSeenAt()); // ours: gone, held or expired
            });
            return released[0] ? ReleaseOutcome.RELEASED : ReleaseOutcome.NOT_HELD;
        }

        @Override
        public void close() {
            // no connection, no thread
        }
    }
}
