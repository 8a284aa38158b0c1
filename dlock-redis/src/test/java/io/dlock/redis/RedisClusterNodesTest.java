package io.dlock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.util.JedisClusterCRC16;

/** Self-test of the test cluster: it forms, fails a killed primary over, takes it back, and moves a slot. */
class RedisClusterNodesTest {

    @Test
    void formsFailsOverRejoinsAndMigrates() {
        try (RedisClusterNodes c = RedisClusterNodes.start()) {
            int primaries = 0;
            for (int i = 0; i < c.size(); i++) {
                primaries += c.isPrimary(i) ? 1 : 0;
            }
            assertEquals(3, primaries);

            // a key lands on its slot's owner; the slot moves with its key, step by step
            String key = "{" + RedisClusterNodes.TestTags.tag(42) + "}k";
            assertEquals(42, JedisClusterCRC16.getSlot(key));
            int owner = c.ownerOf(42);
            try (Jedis j = c.jedis(owner)) {
                j.set(key, "v");
            }
            int target = (owner + 1) % RedisClusterNodes.PRIMARIES;
            List<Integer> steps = new ArrayList<>();
            c.migrate(42, target, steps::add);
            assertEquals(List.of(1, 2, 3, 4), steps);
            assertEquals(target, c.ownerOf(42));
            try (Jedis j = c.jedis(target)) {
                assertEquals("v", j.get(key));
            }

            // the primary holding a lock key is the one killed; a replica takes over
            String lockKey = "dlock:{" + RedisClusterNodes.TestTags.tag(7) + "}lock:x";
            int lockOwner = c.ownerOf(7);
            try (Jedis j = c.jedis(lockOwner)) {
                j.set(lockKey, "o:1");
            }
            int killed = c.killPrimaryHoldingALock();
            assertEquals(lockOwner, killed);
            assertFalse(c.isPrimary(killed));
            assertNotEquals(killed, c.ownerOf(7));
            c.restartKilled();
            try (Jedis j = c.jedis(killed)) {
                assertTrue(j.info("replication").contains("role:slave"), "the restarted node rejoined as a replica");
            }
        }
    }
}
