package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.Deployment;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Collectors;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.JedisSentineled;
import redis.clients.jedis.UnifiedJedis;

/**
 * How the Redis peers reach a deployment: one server, a Sentinel group (the sentinels and a master
 * name) or a Cluster (seed nodes). The one place where the peers' clients are configured per
 * topology, so that a Redisson lock or the raw floor differs between the modes only here.
 */
public enum RedisTopology {
    /** One primary. */
    SINGLE,
    /** A primary found through Redis Sentinel. */
    SENTINEL,
    /** Redis Cluster. */
    CLUSTER;

    /**
     * A Redisson client as {@link RedissonContender} documents it: the lock watchdog at the lease
     * time, pools of 2 to 32 connections (the default keeps 24 idle connections per node open,
     * which only slows the start), one idle subscription connection.
     *
     * @param deployment the deployment (for {@link #SENTINEL}, with its master name)
     * @param lease the lease time, Redisson's lock watchdog timeout
     * @return the started client; the caller shuts it down
     */
    public RedissonClient redisson(Deployment deployment, Duration lease) {
        Config config = new Config();
        config.setLockWatchdogTimeout(lease.toMillis());
        switch (this) {
            case SINGLE:
                config.useSingleServer()
                        .setAddress("redis://" + Deployment.hostPort(deployment.server()))
                        .setConnectionMinimumIdleSize(2)
                        .setConnectionPoolSize(32)
                        .setSubscriptionConnectionMinimumIdleSize(1);
                break;
            case SENTINEL:
                config.useSentinelServers()
                        .setMasterName(masterName(deployment))
                        .addSentinelAddress(deployment.redisUris().toArray(new String[0]))
                        .setMasterConnectionMinimumIdleSize(2)
                        .setMasterConnectionPoolSize(32)
                        .setSlaveConnectionMinimumIdleSize(2)
                        .setSlaveConnectionPoolSize(32)
                        .setSubscriptionConnectionMinimumIdleSize(1);
                break;
            case CLUSTER:
                config.useClusterServers()
                        .addNodeAddress(deployment.redisUris().toArray(new String[0]))
                        .setMasterConnectionMinimumIdleSize(2)
                        .setMasterConnectionPoolSize(32)
                        .setSlaveConnectionMinimumIdleSize(2)
                        .setSlaveConnectionPoolSize(32)
                        .setSubscriptionConnectionMinimumIdleSize(1);
                break;
            default:
                throw new IllegalStateException("topology " + this);
        }
        return Redisson.create(config);
    }

    /**
     * A jedis client with its pool (jedis's defaults), for the raw floor.
     *
     * @param deployment the deployment (for {@link #SENTINEL}, with its master name)
     * @return the client; the caller closes it
     */
    public UnifiedJedis jedis(Deployment deployment) {
        switch (this) {
            case SINGLE:
                return new JedisPooled(new HostAndPort(deployment.server().getHostString(), deployment.server().getPort()));
            case SENTINEL: {
                Set<HostAndPort> sentinels = deployment.addresses().stream()
                        .map(a -> new HostAndPort(a.getHostString(), a.getPort())).collect(Collectors.toSet());
                return new JedisSentineled(masterName(deployment), DefaultJedisClientConfig.builder().build(), sentinels,
                        DefaultJedisClientConfig.builder().build());
            }
            case CLUSTER:
                return new JedisCluster(new HashSet<>(deployment.addresses().stream()
                        .map(a -> new HostAndPort(a.getHostString(), a.getPort())).collect(Collectors.toList())));
            default:
                throw new IllegalStateException("topology " + this);
        }
    }

    private static String masterName(Deployment deployment) {
        if (deployment.masterName() == null) {
            throw new IllegalArgumentException("deployment must name the Sentinel master, was " + deployment);
        }
        return deployment.masterName();
    }
}
