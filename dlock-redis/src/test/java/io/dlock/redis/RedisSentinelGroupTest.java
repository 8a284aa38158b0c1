package io.dlock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/** The test deployment itself: a killed primary is replaced, and comes back as a replica. */
class RedisSentinelGroupTest {

    @Test
    void killedPrimaryIsReplacedAndRejoinsAsAReplica() {
        List<RedisServer> all;
        try (RedisSentinelGroup g = RedisSentinelGroup.start()) {
            all = List.copyOf(g.nodes());
            RedisServer first = g.primary();
            assertTrue(g.isMaster(first));
            try (Jedis j = g.data(first)) {
                j.set("k", "v");
                j.waitReplicas(2, 5000);
            }
            g.killPrimary();
            RedisServer second = g.primary();
            assertNotEquals(first, second);
            assertTrue(g.isMaster(second));
            try (Jedis j = g.data(second)) {
                assertEquals("v", j.get("k"), "the promoted replica has the primary's data");
            }
            g.restartKilled();
            assertFalse(g.isMaster(first), "the killed primary came back as a replica");
            try (Jedis j = g.data(first)) {
                assertTrue(j.info("replication").contains("master_port:" + second.port()));
            }
            g.failover();
            assertNotEquals(second, g.primary());
            g.pauseAll();
            assertTrue(g.sentinels().stream().allMatch(RedisServer::isPaused));
            g.resumeAll();
            g.awaitAgreement();
        }
        for (RedisServer n : List.copyOf(all)) {
            assertFalse(n.isAlive(), n + " was stopped by close()");
        }
    }
}
