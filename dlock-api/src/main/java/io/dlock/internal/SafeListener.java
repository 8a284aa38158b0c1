package io.dlock.internal;

import io.dlock.AcquireOutcome;
import io.dlock.LockListener;
import io.dlock.LostReason;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Shields the core from a listener that throws. */
final class SafeListener implements LockListener {

    private static final Logger LOG = LoggerFactory.getLogger(LockListener.class);

    private final LockListener delegate;

    SafeListener(LockListener delegate) {
        this.delegate = delegate;
    }

    /**
     * Asks a configured listener for the one that receives a client's events
     * ({@link LockListener#forClient(String)}); a listener that throws or answers null is used as
     * it is.
     */
    static SafeListener forClient(LockListener configured, String providerName) {
        LockListener bound = configured;
        try {
            LockListener answer = configured.forClient(providerName);
            if (answer != null) {
                bound = answer;
            } else {
                LOG.warn("dlock: LockListener.forClient returned null; using the listener as it is");
            }
        } catch (RuntimeException e) {
            LOG.warn("dlock: LockListener.forClient threw; using the listener as it is", e);
        }
        return new SafeListener(bound);
    }

    private void guard(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            LOG.warn("dlock: a LockListener threw", e);
        }
    }

    @Override
    public void acquireFinished(String lockName, AcquireOutcome outcome, Duration waited) {
        guard(() -> delegate.acquireFinished(lockName, outcome, waited));
    }

    @Override
    public void released(String lockName, long fencingToken, Duration held) {
        guard(() -> delegate.released(lockName, fencingToken, held));
    }

    @Override
    public void renewed(String lockName, long fencingToken) {
        guard(() -> delegate.renewed(lockName, fencingToken));
    }

    @Override
    public void renewalFailed(String lockName, long fencingToken, Throwable cause) {
        guard(() -> delegate.renewalFailed(lockName, fencingToken, cause));
    }

    @Override
    public void leaseLost(String lockName, long fencingToken, LostReason reason) {
        guard(() -> delegate.leaseLost(lockName, fencingToken, reason));
    }
}
