package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.Contender;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.params.SetParams;

/**
 * The floor on Redis: the least a correct lock can send with jedis. Acquire is
 * {@code SET key token NX PX lease}, retried after 1 ms while taken; release is one script call
 * that deletes the key only if it still holds the token. No renewal, no waiting, no token.
 */
public final class RawRedisContender extends Floor {

    private static final String RELEASE =
            "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

    @Override
    public String name() {
        return "raw jedis (floor)";
    }

    @Override
    public Session connect(InetSocketAddress server, Duration lease) {
        JedisPooled jedis = new JedisPooled(new HostAndPort(server.getHostString(), server.getPort()));
        String sha = jedis.scriptLoad(RELEASE);
        return new Session() {
            @Override
            public Held acquire(String key) throws InterruptedException {
                String token = UUID.randomUUID().toString();
                while (!"OK".equals(jedis.set(key, token, SetParams.setParams().nx().px(lease.toMillis())))) {
                    Thread.sleep(1);
                }
                return () -> jedis.evalsha(sha, List.of(key), List.of(token));
            }

            @Override
            public void close() {
                jedis.close();
            }
        };
    }
}
