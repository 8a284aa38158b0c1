package io.dlock.internal;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;

/**
 * Per lock name, the threads of one client that want it, in arrival order. Only the thread
 * holding a slot's permit talks to the server (waits there, or holds the lease), so one client
 * has at most one server-side waiter per name however many threads wait, and threads sharing a
 * client exclude each other. Slots are removed when nobody uses them, so the map stays as small
 * as the set of names in use.
 */
final class LocalQueue {

    /** Permits that {@link #wakeAll()} adds: far more than there can be waiters, far below overflow. */
    private static final int WAKE_PERMITS = 1 << 20;

    /** One lock name's local queue. */
    static final class Slot {
        final Semaphore permit;
        private int users; // guarded by the map's compute functions

        Slot(int permits) {
            permit = new Semaphore(permits, true);
        }
    }

    private final ConcurrentHashMap<String, Slot> slots = new ConcurrentHashMap<>();
    private volatile boolean woken;

    Slot enter(String name) {
        return slots.compute(name, (k, s) -> {
            Slot slot = s == null ? new Slot(woken ? WAKE_PERMITS : 1) : s;
            slot.users++;
            return slot;
        });
    }

    /**
     * Lets every local waiter through, now and later: the client is closing, and a waiter that
     * gets a permit this way checks the client, finds it closed and gives up, never talking to
     * the server. Waiters therefore wait without polling, which keeps them in arrival order.
     */
    void wakeAll() {
        woken = true;
        for (Slot slot : slots.values()) {
            slot.permit.release(WAKE_PERMITS);
        }
    }

    void exit(String name) {
        slots.computeIfPresent(name, (k, s) -> --s.users == 0 ? null : s);
    }

    int size() {
        return slots.size();
    }
}
