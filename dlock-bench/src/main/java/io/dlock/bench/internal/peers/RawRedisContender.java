package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.Deployment;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.params.SetParams;

/**
 * The floor on Redis: the least a correct lock can send with jedis. Acquire is
 * {@code SET key token NX PX lease}, retried after 1 ms while taken; release is one script call
 * that deletes the key only if it still holds the token. No renewal, no waiting, no token. On a
 * Sentinel group jedis finds the primary through the sentinels; on a Cluster it routes each key
 * to its slot's primary (where the script is loaded on first use).
 */
public final class RawRedisContender extends Floor {

    /** The compare-and-delete every Redis floor releases with (the Redlock floor on each node). */
    static final String RELEASE =
            "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

    private final RedisTopology topology;

    /** The floor on one server, as in the Redis comparison. */
    public RawRedisContender() {
        this(RedisTopology.SINGLE);
    }

    /**
     * @param topology how jedis reaches the deployment
     */
    public RawRedisContender(RedisTopology topology) {
        this.topology = topology;
    }

    @Override
    public String name() {
        return "raw jedis (floor)";
    }

    @Override
    public Session connect(Deployment deployment, Duration lease) {
        UnifiedJedis jedis = topology.jedis(deployment);
        String sha;
        try {
            // a cluster has no one node to load it on: each node gets it with the first release there
            sha = topology == RedisTopology.CLUSTER ? sha1(RELEASE) : jedis.scriptLoad(RELEASE);
        } catch (RuntimeException e) {
            jedis.close();
            throw e;
        }
        return new Session() {
            @Override
            public Held acquire(String key) throws InterruptedException {
                String token = UUID.randomUUID().toString();
                while (!"OK".equals(jedis.set(key, token, SetParams.setParams().nx().px(lease.toMillis())))) {
                    Thread.sleep(1);
                }
                return () -> {
                    try {
                        jedis.evalsha(sha, List.of(key), List.of(token));
                    } catch (JedisNoScriptException e) {
                        jedis.eval(RELEASE, List.of(key), List.of(token));
                    }
                };
            }

            @Override
            public void close() {
                jedis.close();
            }
        };
    }

    /**
     * @param script a Lua script
     * @return its SHA-1 in hex, the name {@code EVALSHA} knows it by
     */
    static String sha1(String script) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(script.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-1", e);
        }
    }
}
