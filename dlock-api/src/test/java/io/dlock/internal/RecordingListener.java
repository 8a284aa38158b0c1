package io.dlock.internal;

import io.dlock.AcquireOutcome;
import io.dlock.LockListener;
import io.dlock.LostReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Records every {@link LockListener} event. */
public class RecordingListener implements LockListener {

    public record Finished(String name, AcquireOutcome outcome, Duration waited) { }

    public record Released(String name, long token, Duration held) { }

    public record Lost(String name, long token, LostReason reason) { }

    public final List<Finished> finished = Collections.synchronizedList(new ArrayList<>());
    public final List<Released> released = Collections.synchronizedList(new ArrayList<>());
    public final List<String> renewed = Collections.synchronizedList(new ArrayList<>());
    public final List<Throwable> renewalFailed = Collections.synchronizedList(new ArrayList<>());
    public final List<Lost> lost = Collections.synchronizedList(new ArrayList<>());

    @Override
    public void acquireFinished(String lockName, AcquireOutcome outcome, Duration waited) {
        finished.add(new Finished(lockName, outcome, waited));
    }

    @Override
    public void released(String lockName, long fencingToken, Duration held) {
        released.add(new Released(lockName, fencingToken, held));
    }

    @Override
    public void renewed(String lockName, long fencingToken) {
        renewed.add(lockName);
    }

    @Override
    public void renewalFailed(String lockName, long fencingToken, Throwable cause) {
        renewalFailed.add(cause);
    }

    @Override
    public void leaseLost(String lockName, long fencingToken, LostReason reason) {
        lost.add(new Lost(lockName, fencingToken, reason));
    }

    /** @return the outcome of the most recent acquire call */
    public AcquireOutcome lastOutcome() {
        synchronized (finished) {
            return finished.isEmpty() ? null : finished.get(finished.size() - 1).outcome();
        }
    }
}
