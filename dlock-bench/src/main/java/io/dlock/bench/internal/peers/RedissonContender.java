package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.Contender;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson's {@code RLock} ({@code getLock}: reentrant, not fair), with its lock watchdog set to
 * the benchmark's lease time. Connection pool: 2 to 32 connections (the default keeps 24 idle
 * connections per client open, which only slows the start).
 */
public final class RedissonContender implements Contender {

    @Override
    public String name() {
        return "Redisson RLock";
    }

    @Override
    public Session connect(InetSocketAddress server, Duration lease) {
        Config config = new Config();
        config.setLockWatchdogTimeout(lease.toMillis());
        config.useSingleServer()
                .setAddress("redis://" + server.getHostString() + ":" + server.getPort())
                .setConnectionMinimumIdleSize(2)
                .setConnectionPoolSize(32)
                .setSubscriptionConnectionMinimumIdleSize(1);
        RedissonClient redisson = Redisson.create(config);
        return new Session() {
            @Override
            public Held acquire(String key) {
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
