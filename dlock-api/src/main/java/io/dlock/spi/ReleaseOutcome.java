package io.dlock.spi;

/** What {@link LockBackend#release(Grant)} did: a known outcome (an unknown one is thrown). */
public enum ReleaseOutcome {
    /** This call released the lock. */
    RELEASED,
    /** This owner no longer held the lock (it expired, was taken over, or was released before); nothing changed. */
    NOT_HELD
}
