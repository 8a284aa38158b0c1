package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.Contender;
import io.dlock.bench.internal.Deployment;
import java.time.Duration;

/**
 * A single-server contender run on the first node of a deployment of several, under a name that
 * says so: on Redlock's independent primaries, the lock a user of that library would take on one
 * of them instead (Redisson's {@code RFencedLock}, which its documentation names in place of its
 * deprecated {@code RedissonRedLock}). It survives less than a lock on a majority; it is there
 * for its request pattern and its fencing token, not as an equal.
 */
public final class OnFirstNode implements Contender {

    private final Contender inner;

    /**
     * @param inner a contender that takes a single-server deployment
     */
    public OnFirstNode(Contender inner) {
        this.inner = inner;
    }

    @Override
    public String name() {
        return inner.name() + " (first node only)";
    }

    @Override
    public boolean waits() {
        return inner.waits();
    }

    @Override
    public boolean renews() {
        return inner.renews();
    }

    @Override
    public Session connect(Deployment deployment, Duration lease) throws Exception {
        return inner.connect(Deployment.single(deployment.addresses().get(0)), lease);
    }
}
