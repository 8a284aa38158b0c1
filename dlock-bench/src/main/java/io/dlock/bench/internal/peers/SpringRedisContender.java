package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.Contender;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.locks.Lock;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;
import redis.clients.jedis.JedisPoolConfig;

/**
 * Spring Integration's {@code RedisLockRegistry} in its pub/sub mode, on a Jedis connection
 * factory (pool of 32), with lock expiry at the benchmark's lease time and its renewal scheduler
 * set, so that held locks are kept alive.
 */
public final class SpringRedisContender implements Contender.OnOneServer {

    @Override
    public String name() {
        return "Spring RedisLockRegistry";
    }

    @Override
    public Session connect(InetSocketAddress server, Duration lease) {
        JedisPoolConfig pool = new JedisPoolConfig();
        pool.setMaxTotal(32);
        pool.setMaxIdle(32);
        JedisConnectionFactory factory = new JedisConnectionFactory(
                new RedisStandaloneConfiguration(server.getHostString(), server.getPort()),
                JedisClientConfiguration.builder().usePooling().poolConfig(pool).build());
        factory.afterPropertiesSet();
        factory.start();
        ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
        scheduler.setThreadNamePrefix("spring-lock-renewal-");
        scheduler.initialize();
        RedisLockRegistry registry = new RedisLockRegistry(factory, "dlock-bench", lease.toMillis());
        registry.setRedisLockType(RedisLockRegistry.RedisLockType.PUB_SUB_LOCK);
        registry.setRenewalTaskScheduler(scheduler);
        return new Session() {
            @Override
            public Held acquire(String key) {
                Lock lock = registry.obtain(key);
                lock.lock();
                return lock::unlock;
            }

            @Override
            public void close() {
                registry.destroy();
                scheduler.shutdown();
                factory.destroy();
            }
        };
    }
}
