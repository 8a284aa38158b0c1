package io.dlock.internal;

import java.util.HashSet;
import java.util.Set;

/** Finds dlock's threads (named {@code dlock-...}), to check that a closed client leaves none. */
public final class DlockThreads {

    private DlockThreads() { }

    public static Set<Thread> alive() {
        Set<Thread> out = new HashSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("dlock-") && t.isAlive()) {
                out.add(t);
            }
        }
        return out;
    }

    /** Fails unless every dlock thread not in {@code before} ends within a generous grace period. */
    public static void assertNoneLeft(Set<Thread> before) throws InterruptedException {
        long end = System.nanoTime() + 10_000_000_000L;
        for (Thread t : alive()) {
            if (before.contains(t)) {
                continue;
            }
            t.join(Math.max(1, (end - System.nanoTime()) / 1_000_000));
            if (t.isAlive()) {
                throw new AssertionError("thread still running after close: " + t.getName());
            }
        }
    }
}
