package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.Contender;
import io.dlock.bench.internal.Deployment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.redisson.RedissonMultiLock;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/**
 * Redisson over independent primaries: one single-server Redisson client per node (configured as
 * {@link RedissonContender}'s), and for each acquire a {@code RedissonRedLock} (a majority of the
 * nodes' {@code RLock}s, each tried for its share of the wait) or a {@code RedissonMultiLock}
 * (every node's {@code RLock}) over the lock of that name on every client, as Redisson's
 * documentation shows them. {@code RedissonRedLock} is deprecated in Redisson 3.52.0 (since
 * 3.12.5; its documentation names {@code RLock} and {@code RFencedLock} instead); it is measured
 * because it is what Redlock users of Redisson have.
 */
public final class RedissonRedLockContender implements Contender {

    private final boolean redLock;

    /**
     * @param redLock {@code RedissonRedLock} when true, {@code RedissonMultiLock} when false
     */
    public RedissonRedLockContender(boolean redLock) {
        this.redLock = redLock;
    }

    @Override
    public String name() {
        return redLock ? "Redisson RedLock" : "Redisson MultiLock";
    }

    @Override
    public Session connect(Deployment deployment, Duration lease) {
        List<RedissonClient> clients = new ArrayList<>();
        try {
            for (var node : deployment.addresses()) {
                clients.add(RedisTopology.SINGLE.redisson(Deployment.single(node), lease));
            }
        } catch (RuntimeException e) {
            clients.forEach(RedissonClient::shutdown);
            throw e;
        }
        return new Session() {
            @Override
            @SuppressWarnings("deprecation") // RedissonRedLock: see the class comment
            public Held acquire(String key) {
                RLock[] locks = new RLock[clients.size()];
                for (int i = 0; i < locks.length; i++) {
                    locks[i] = clients.get(i).getLock(key);
                }
                RLock lock = redLock ? new RedissonRedLock(locks) : new RedissonMultiLock(locks);
                lock.lock();
                return lock::unlock;
            }

            @Override
            public void close() {
                clients.forEach(RedissonClient::shutdown);
            }
        };
    }
}
