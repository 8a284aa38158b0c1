package io.dlock;

/** How one call to acquire a lock ended; reported to {@link LockListener#acquireFinished}. */
public enum AcquireOutcome {
    /** The lock was granted. */
    ACQUIRED,
    /** The lock was held by someone else and the caller asked not to wait. */
    CONTENDED,
    /** The lock was still held by someone else when the caller's wait ran out. */
    TIMED_OUT,
    /** The waiting thread was interrupted. */
    INTERRUPTED,
    /** The asynchronous acquisition was cancelled by its caller. */
    CANCELLED,
    /** The backend failed; the caller received a {@link LockBackendException}. */
    FAILED
}
