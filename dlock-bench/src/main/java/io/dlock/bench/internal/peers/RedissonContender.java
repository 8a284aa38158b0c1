package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.Deployment;
import java.time.Duration;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/**
 * Redisson's {@code RLock} ({@code getLock}: reentrant, not fair), or its {@code RFencedLock}
 * ({@code getFencedLock}: the same lock with a fencing token, taken with
 * {@code lockAndGetToken()}), with its lock watchdog set to the benchmark's lease time, on one
 * server, a Sentinel group or a Cluster. Client configuration: {@link RedisTopology#redisson}.
 */
public final class RedissonContender implements io.dlock.bench.internal.Contender {

    private final RedisTopology topology;
    private final boolean fenced;

    /** {@code RLock} on one server, as in the Redis comparison. */
    public RedissonContender() {
        this(RedisTopology.SINGLE, false);
    }

    /**
     * @param topology how Redisson reaches the deployment
     * @param fenced whether the lock is {@code RFencedLock} rather than {@code RLock}
     */
    public RedissonContender(RedisTopology topology, boolean fenced) {
        this.topology = topology;
        this.fenced = fenced;
    }

    @Override
    public String name() {
        return fenced ? "Redisson RFencedLock" : "Redisson RLock";
    }

    @Override
    public Session connect(Deployment deployment, Duration lease) {
        RedissonClient redisson = topology.redisson(deployment, lease);
        return new Session() {
            @Override
            public Held acquire(String key) {
                if (fenced) {
                    RFencedLock lock = redisson.getFencedLock(key);
                    if (lock.lockAndGetToken() == null) {
                        throw new IllegalStateException("Redisson's fenced lock gave no token for " + key);
                    }
                    return lock::unlock;
                }
                RLock lock = redisson.getLock(key);
                lock.lock();
                return lock::unlock;
            }

            @Override
            public void close() {
                redisson.shutdown();
            }
        };
    }
}
