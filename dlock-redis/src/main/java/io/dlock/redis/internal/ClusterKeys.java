package io.dlock.redis.internal;

import java.nio.charset.StandardCharsets;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * The key layout of Redis Cluster mode, for a prefix {@code P}: every key a grant of lock
 * {@code NAME} touches lies in one hash slot s, the slot of the whole name, so that one script
 * runs on the slot's primary with no cross-slot access. {@code P{T}lock:NAME} holds the lock,
 * {@code P{T}fence} is slot s's token counter, {@code P{T}epoch} slot s's lock-delay marker, and
 * {@code P{T}released:NAME} the release channel, where T = {@link #tag(int) tag(s)} is a hash tag
 * that Redis maps to slot s. The counter and the marker thus move with the slot (a migration) and
 * are replicated with it (a failover), and tokens strictly increase per name.
 *
 * <p>s is CRC16 of the whole name's UTF-8 bytes modulo 16384, with no hash-tag extraction, so that
 * names with braces still spread over the slots. T is the smallest decimal number whose CRC16
 * is s modulo 16384: at most 6 digits, and a storage format (keys written by one version must be
 * found by the next): the table is pinned by a test and must never change. The prefix may not
 * contain braces (the URI is refused), or it would become the hash tag of every key.
 */
final class ClusterKeys extends Keys {

    /** The number of hash slots of a Redis Cluster. */
    static final int SLOTS = 16384;

    private static final String[] TAGS = tags();

    ClusterKeys(String prefix) {
        super(prefix);
    }

    /** The smallest decimal number hashing to each slot; about 110,000 CRC16s, once per JVM. */
    private static String[] tags() {
        String[] tags = new String[SLOTS];
        int left = SLOTS;
        for (int n = 0; left > 0; n++) {
            String s = Integer.toString(n);
            int slot = JedisClusterCRC16.getCRC16(s) & (SLOTS - 1);
            if (tags[slot] == null) {
                tags[slot] = s;
                left--;
            }
        }
        return tags;
    }

    /**
     * @param name a lock name
     * @return its slot: CRC16 of the whole name's UTF-8 bytes, modulo 16384 (braces not treated as a hash tag)
     */
    static int slot(String name) {
        return JedisClusterCRC16.getCRC16(name.getBytes(StandardCharsets.UTF_8)) & (SLOTS - 1);
    }

    /**
     * @param slot a hash slot, 0 to 16383
     * @return the smallest decimal number that Redis hashes to that slot
     */
    static String tag(int slot) {
        return TAGS[slot];
    }

    /** @return {@code P{T}} for the name's slot */
    private String slotted(String name) {
        return prefix() + "{" + TAGS[slot(name)] + "}";
    }

    @Override
    String lock(String name) {
        return slotted(name) + "lock:" + name;
    }

    /** @return the token counter of the name's slot */
    @Override
    String fence(String name) {
        return slotted(name) + "fence";
    }

    /** @return the lock-delay marker of the name's slot */
    @Override
    String epoch(String name) {
        return slotted(name) + "epoch";
    }

    @Override
    String released(String name) {
        return slotted(name) + "released:" + name;
    }
}
