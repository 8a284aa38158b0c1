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

    /** One lock name's local queue. */
    static final class Slot {
        final Semaphore permit = new Semaphore(1, true);
        private int users; // guarded by the map's compute functions
    }

    private final ConcurrentHashMap<String, Slot> slots = new ConcurrentHashMap<>();

    Slot enter(String name) {
        return slots.compute(name, (k, s) -> {
            Slot slot = s == null ? new Slot() : s;
            slot.users++;
            return slot;
        });
    }

    void exit(String name) {
        slots.computeIfPresent(name, (k, s) -> --s.users == 0 ? null : s);
    }

    int size() {
        return slots.size();
    }
}
