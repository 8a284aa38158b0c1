package io.dlock.redis.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.StringJoiner;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * Pins Redis Cluster mode's key layout, a storage format: keys written by one version of dlock must
 * be found by the next, so the slot tags and the key names must never change. The expected values
 * were computed outside Java, with an independent CRC16 (XMODEM, checked against Redis's test vector
 * CRC16("123456789") = 0x31C3) in Python.
 */
class ClusterKeysTest {

    @Test
    void theTagTableIsPinned() throws Exception {
        assertEquals("3560", ClusterKeys.tag(0));
        assertEquals("22179", ClusterKeys.tag(1));
        assertEquals("39296", ClusterKeys.tag(16383));
        StringJoiner all = new StringJoiner(",");
        for (int s = 0; s < ClusterKeys.SLOTS; s++) {
            String tag = ClusterKeys.tag(s);
            assertTrue(tag.length() <= 6, tag);
            // Redis maps a key whose hash tag is T to T's slot: the tag puts every key of a name in its slot
            assertEquals(s, JedisClusterCRC16.getSlot("p:{" + tag + "}lock:x"));
            all.add(tag);
        }
        byte[] digest = MessageDigest.getInstance("SHA-256").digest(all.toString().getBytes(StandardCharsets.UTF_8));
        assertEquals("1502e2ec8c9525fca613a80c47af160c9cfca80030dc2a66ab1e0d34b76e6730", HexFormat.of().formatHex(digest),
                "the table of slot tags changed: it is a storage format, keys already written would not be found");
    }

    @Test
    void theKeyNamesArePinned() {
        assertEquals(0x31C3, JedisClusterCRC16.getCRC16("123456789"));
        ClusterKeys keys = new ClusterKeys("dlock:");
        assertEquals(865, ClusterKeys.slot("alpha"));
        assertEquals("dlock:{10415}lock:alpha", keys.lock("alpha"));
        assertEquals("dlock:{10415}fence", keys.fence("alpha"));
        assertEquals("dlock:{10415}epoch", keys.epoch("alpha"));
        assertEquals("dlock:{10415}released:alpha", keys.released("alpha"));
        assertEquals("dlock:{4479}lock:orders/42", keys.lock("orders/42"));
        assertEquals("dlock:{10235}lock:ünïcode", keys.lock("ünïcode"));
        // braces in a name are no hash tag: the whole name's slot, so such names still spread
        assertEquals(12097, ClusterKeys.slot("{x}a"));
        assertEquals("dlock:{44812}lock:{x}a", keys.lock("{x}a"));
        assertNotEquals(ClusterKeys.slot("{x}a"), ClusterKeys.slot("{x}b"));
    }
}
