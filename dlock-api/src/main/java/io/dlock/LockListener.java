package io.dlock;

import java.time.Duration;

/**
 * A hook for metrics and tracing. Every method has an empty default, so an implementation
 * overrides only what it needs. {@code dlock-micrometer} provides one that records Micrometer
 * meters.
 *
 * <p>Methods are called synchronously on dlock's own threads or on the caller's thread, so they
 * must be fast and must not block. They may be called concurrently and must be thread-safe. An
 * exception thrown by a listener is logged and otherwise ignored.
 *
 * <p>A listener set in {@link LockClientConfig.Builder#listener(LockListener)} may be shared by
 * several clients. Each client first calls {@link #forClient(String)} once with the name of its
 * backend, and reports its events to the listener that call returns.
 */
public interface LockListener {

    /** A listener that does nothing. */
    LockListener NONE = new LockListener() { };

    /**
     * A client is opening with this listener. Called once per client, before any of its events,
     * with the name of the client's provider ({@link io.dlock.spi.LockProvider#name()}, e.g.
     * {@code redis}); the client then reports every event to the listener returned. A listener
     * that tells backends apart (a metrics tag, say) returns a copy bound to the name; the
     * default returns this listener.
     *
     * @param providerName the name of the client's provider, never null
     * @return the listener that receives this client's events, never null
     */
    default LockListener forClient(String providerName) {
        return this;
    }

    /**
     * One call to acquire a lock ended.
     *
     * @param lockName the lock
     * @param outcome how it ended
     * @param waited how long the call took
     */
    default void acquireFinished(String lockName, AcquireOutcome outcome, Duration waited) { }

    /**
     * A lease was released by its holder.
     *
     * @param lockName the lock
     * @param fencingToken the lease's token
     * @param held how long the lease was held
     */
    default void released(String lockName, long fencingToken, Duration held) { }

    /**
     * A lease was renewed.
     *
     * @param lockName the lock
     * @param fencingToken the lease's token
     */
    default void renewed(String lockName, long fencingToken) { }

    /**
     * A renewal failed with a backend error; it will be retried while the lease is still valid.
     *
     * @param lockName the lock
     * @param fencingToken the lease's token
     * @param cause the failure
     */
    default void renewalFailed(String lockName, long fencingToken, Throwable cause) { }

    /**
     * A lease ended for a reason other than its release.
     *
     * @param lockName the lock
     * @param fencingToken the lease's token
     * @param reason why it ended
     */
    default void leaseLost(String lockName, long fencingToken, LostReason reason) { }
}
