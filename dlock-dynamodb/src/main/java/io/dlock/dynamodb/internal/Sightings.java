package io.dlock.dynamodb.internal;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The waiter rule's memory: for each lock name this client waits on, the record version it saw and
 * when it first saw it, on the client's monotonic ticker. Thread-safe.
 *
 * <p>A record version is a fresh random id on every write, so an item whose version is still
 * {@code R} has not been written since it got {@code R}: the takeover write is conditional on
 * {@code rvn = R}, and DynamoDB checks that for us. So the sightings need not be continuous, and
 * every attempt of this client may use a sighting of an earlier one (a {@code tryAcquire()}
 * repeated every few seconds can therefore take over a crashed holder's lock). Time is counted
 * from when the answer that showed {@code R} arrived, which is after the write that set it.
 *
 * <p>Bounded: past {@link #MAX} names it starts over, which only delays a takeover.
 */
final class Sightings {

    /** The most names remembered. */
    static final int MAX = 10_000;

    /**
     * One sighting.
     *
     * @param rvn the record version seen
     * @param owner the owner id it named
     * @param leaseNanos the holder's lease time, from the item
     * @param firstSeenAt the ticker reading just after the first answer that showed {@code rvn}
     */
    record Sighting(String rvn, String owner, long leaseNanos, long firstSeenAt) {

        /** @return nanoseconds until this version has been seen unchanged for its lease time; 0 or less once it has */
        long remaining(long now) {
            return firstSeenAt + leaseNanos - now;
        }

        /** @return whether the version has been seen unchanged for a whole lease time */
        boolean ripe(long now) {
            return remaining(now) <= 0;
        }
    }

    private final ConcurrentHashMap<String, Sighting> byName = new ConcurrentHashMap<>();

    /**
     * Records that a held item was seen, keeping the first sighting of its record version.
     *
     * @param name the lock
     * @param item what was read; held
     * @param now the ticker reading taken after the answer arrived
     * @return the sighting of the item's current version
     */
    Sighting saw(String name, LockItem item, long now) {
        if (byName.size() >= MAX && !byName.containsKey(name)) {
            byName.clear();
        }
        long leaseNanos = TimeUnit.MILLISECONDS.toNanos(item.leaseMillis());
        return byName.compute(name, (k, previous) -> previous != null && previous.rvn().equals(item.rvn())
                ? previous : new Sighting(item.rvn(), item.owner(), leaseNanos, now));
    }

    /**
     * @param name the lock
     * @return the last sighting, or null
     */
    Sighting get(String name) {
        return byName.get(name);
    }

    /**
     * Forgets a name: it was granted to this client, or seen free.
     *
     * @param name the lock
     */
    void forget(String name) {
        byName.remove(name);
    }

    int size() {
        return byName.size();
    }
}
