package io.dlock.redis.internal;

/**
 * The key and channel layout, for a prefix {@code P}: {@code P lock:NAME} holds a lock's
 * {@code OWNER:TOKEN} with the lease as its expiry; {@code P fence} is the one token counter shared
 * by every name; {@code P epoch} is the lock-delay marker (see {@link Script#ACQUIRE}: which server
 * process wrote it, when, and the longest lock-delay asked since); {@code P released:NAME} carries
 * release notices; {@code P client:ID} is a client's own channel that keeps its subscriber
 * connection subscribed while nobody waits. Distinct names give distinct keys (the prefix and the
 * {@code lock:} part are fixed), and none collides with the counter or the marker.
 */
class Keys {

    private final String prefix;

    Keys(String prefix) {
        this.prefix = prefix;
    }

    String prefix() {
        return prefix;
    }

    String lock(String name) {
        return prefix + "lock:" + name;
    }

    /**
     * @param name the lock being granted
     * @return the counter its token comes from: one for every name
     */
    String fence(String name) {
        return prefix + "fence";
    }

    /**
     * @param name the lock being granted
     * @return the lock-delay marker that guards it: one for every name
     */
    String epoch(String name) {
        return prefix + "epoch";
    }

    String released(String name) {
        return prefix + "released:" + name;
    }

    String control(String clientId) {
        return prefix + "client:" + clientId;
    }

    /** The value a grant stores in its lock key. Owner ids are hex, so the first ':' splits it. */
    static String value(String ownerId, long token) {
        return ownerId + ":" + token;
    }
}
