package io.dlock.internal;

import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per lock name, the acquisitions of one client that want it, in arrival order. Only the holder
 * of a name's slot talks to the server (waits there, or holds the lease), so one client has at
 * most one server-side attempt per name however many callers wait, and callers sharing a client
 * exclude each other.
 *
 * <p>A waiter is a place in a queue, not a parked thread: when the slot passes to it, its
 * {@code onGranted} callback runs (on the thread that passed the slot), and a blocking caller and
 * an asynchronous one wait the same way. Every change of a name's slot happens inside one
 * {@link ConcurrentHashMap#compute} of that name, so the hand-over and a waiter giving up cannot
 * both win: a waiter that gives up after the slot was passed to it passes it on ({@link #leave}),
 * and no slot is lost or granted twice. Slots are removed when nobody holds or waits for them, so
 * the map stays as small as the set of names in use.
 */
final class LocalQueue {

    /**
     * One acquisition's place in a name's queue; once it holds the slot, the token its lease keeps
     * until the lease ends ({@link #release}).
     */
    static final class Waiter {
        final String name;
        /**
         * Runs once when the slot passes to this waiter; dropped as soon as the slot is its own
         * (at once or later), so a held slot, which lasts as long as its lease, does not keep the
         * acquisition it belonged to. Written inside the map's compute on name.
         */
        private Runnable onGranted;
        private volatile boolean holds; // written inside the map's compute on name

        private Waiter(String name, Runnable onGranted) {
            this.name = name;
            this.onGranted = onGranted;
        }

        /**
         * Whether the slot is this waiter's now. The thread that entered reads it to learn whether
         * the slot was free, or was passed to it before it was ready for {@code onGranted}.
         */
        boolean holds() {
            return holds;
        }
    }

    /** One name's slot: its holder, and the waiters behind it in arrival order. */
    private static final class Slot {
        /** Made when the first waiter queues: most held names never have one. */
        ArrayDeque<Waiter> waiting;

        boolean nobodyWaits() {
            return waiting == null || waiting.isEmpty();
        }
        Waiter holder;
    }

    private final ConcurrentHashMap<String, Slot> slots = new ConcurrentHashMap<>();

    /**
     * Joins the name's queue: takes the slot at once if nobody holds it ({@link Waiter#holds()}
     * is then true and {@code onGranted} never runs), else waits behind the others.
     *
     * @param onGranted runs once when the slot passes to this waiter later, on the thread that
     *     passes it; must be short and must not block
     */
    Waiter enter(String name, Runnable onGranted) {
        Waiter w = new Waiter(name, onGranted);
        slots.compute(name, (k, s) -> {
            Slot slot = s == null ? new Slot() : s;
            if (slot.holder == null) {
                slot.holder = w;
                w.holds = true;
                w.onGranted = null; // never runs
            } else {
                if (slot.waiting == null) {
                    slot.waiting = new ArrayDeque<>(4);
                }
                slot.waiting.addLast(w);
            }
            return slot;
        });
        return w;
    }

    /** @return a waiter holding the name's slot, or null if someone holds it (nothing is queued then) */
    Waiter tryEnter(String name) {
        Waiter w = new Waiter(name, () -> { });
        boolean[] took = {false};
        slots.compute(name, (k, s) -> {
            Slot slot = s == null ? new Slot() : s;
            if (slot.holder == null) {
                slot.holder = w;
                w.holds = true;
                took[0] = true;
            }
            return slot;
        });
        return took[0] ? w : null;
    }

    /**
     * The holder is done with the slot (its lease ended, or its acquisition ended without one): the
     * next waiter gets it, and its {@code onGranted} runs on this thread. Does nothing if
     * {@code w} does not hold the slot, so a second call is harmless.
     */
    void release(Waiter w) {
        Runnable next = pass(w, false);
        if (next != null) {
            next.run();
        }
    }

    /**
     * A waiter gives up: it leaves the queue, or, if the slot was passed to it meanwhile, passes it
     * on as {@link #release} does. Idempotent.
     */
    void leave(Waiter w) {
        Runnable next = pass(w, true);
        if (next != null) {
            next.run();
        }
    }

    /**
     * @return the callback of the waiter the slot passed to (taken from it), which the caller runs
     *     outside the map; null if the slot passed to nobody
     */
    private Runnable pass(Waiter w, boolean orLeave) {
        Runnable[] next = {null};
        slots.computeIfPresent(w.name, (k, slot) -> {
            if (slot.holder == w) {
                w.holds = false;
                Waiter n = slot.waiting == null ? null : slot.waiting.pollFirst();
                slot.holder = n;
                if (n != null) {
                    n.holds = true;
                    next[0] = n.onGranted;
                    n.onGranted = null;
                }
            } else if (orLeave) {
                if (slot.waiting != null) {
                    slot.waiting.remove(w);
                }
            }
            return slot.holder == null && slot.nobodyWaits() ? null : slot;
        });
        return next[0];
    }

    /** @return the number of names with a holder or waiters */
    int size() {
        return slots.size();
    }

    /** @return how many wait behind the holder of the name's slot (for tests) */
    int waiting(String name) {
        int[] n = {0};
        slots.computeIfPresent(name, (k, slot) -> {
            n[0] = slot.waiting == null ? 0 : slot.waiting.size();
            return slot;
        });
        return n[0];
    }
}
