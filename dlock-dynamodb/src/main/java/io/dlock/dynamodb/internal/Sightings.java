package io.dlock.dynamodb.internal;

import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The waiter rules' memory: for each lock name this client waits on, the record version it saw and
 * when it first saw it, and the first ticket in line and when it first saw that ticket first with
 * that version, on the client's monotonic ticker. Thread-safe.
 *
 * <p>A record version is a fresh random id on every grant, renewal and release, so an item whose
 * version is still {@code R} has not been granted, renewed or released since it got {@code R}: a
 * takeover write is conditional on {@code rvn = R}, and DynamoDB checks that for us. So the
 * sightings need not be continuous, and every attempt of this client may use a sighting of an
 * earlier one (a {@code tryAcquire()} repeated every few seconds can therefore take over a crashed
 * holder's lock). Time is counted from when the answer that showed {@code R} arrived, which is
 * after the write that set it.
 *
 * <p>The same holds for the first ticket in line: tickets are only ever appended behind it or
 * removed, and a ticket is never added twice, so an item that still has version {@code R} and
 * first ticket {@code H} has had both since they were first seen together.
 *
 * <p>Bounded: past {@link #MAX} names it starts over, which only delays a takeover or a skip.
 */
final class Sightings {

    /** The most names remembered. */
    static final int MAX = 10_000;

    /**
     * One sighting.
     *
     * @param rvn the record version seen, null if the item was never granted
     * @param owner the owner id it named, null if the lock was free
     * @param leaseNanos the holder's lease time, from the item; 0 when free
     * @param firstSeenAt the ticker reading just after the first answer that showed {@code rvn}
     * @param head the first ticket in line, or null
     * @param headNanos the head's ticket time, 0 without a head
     * @param headSeenAt the ticker reading just after the first answer that showed {@code head}
     *     first in line with {@code rvn}
     */
    record Sighting(String rvn, String owner, long leaseNanos, long firstSeenAt, String head, long headNanos,
                    long headSeenAt) {

        /**
         * @return nanoseconds until a held lock's version has been seen unchanged for its lease
         *     time (the lease rule); 0 or less once it has
         */
        long takeoverRemaining(long now) {
            return firstSeenAt + leaseNanos - now;
        }

        /** @return whether the lock is held and its version has been seen unchanged for a whole lease time */
        boolean takeoverRipe(long now) {
            return owner != null && takeoverRemaining(now) <= 0;
        }

        /**
         * The ticket rule: the head has had its ticket time to take a free lock, or, when the lock
         * is held, the lease time and then its ticket time to take it over.
         *
         * @return nanoseconds until the head may be skipped; 0 or less once it may
         */
        long skipRemaining(long now) {
            return headSeenAt + headNanos + (owner != null ? leaseNanos : 0) - now;
        }

        /** @return whether there is a head and it may be skipped */
        boolean skipRipe(long now) {
            return head != null && skipRemaining(now) <= 0;
        }
    }

    private final ConcurrentHashMap<String, Sighting> byName = new ConcurrentHashMap<>();

    /**
     * Records that an item was seen, keeping the first sighting of its record version and of its
     * head with that version.
     *
     * @param name the lock
     * @param item what was read
     * @param now the ticker reading taken after the answer arrived
     * @return the sighting of the item's current version and head
     */
    Sighting saw(String name, LockItem item, long now) {
        if (byName.size() >= MAX && !byName.containsKey(name)) {
            byName.clear();
        }
        long leaseNanos = TimeUnit.MILLISECONDS.toNanos(item.leaseMillis());
        String head = item.head();
        long headNanos = head == null ? 0 : TimeUnit.MILLISECONDS.toNanos(LockItem.ticketMillis(head));
        return byName.compute(name, (k, previous) -> {
            if (previous == null || !Objects.equals(previous.rvn(), item.rvn())) {
                return new Sighting(item.rvn(), item.owner(), leaseNanos, now, head, headNanos, now);
            }
            if (!Objects.equals(previous.head(), head)) {
                return new Sighting(previous.rvn(), previous.owner(), previous.leaseNanos(), previous.firstSeenAt(),
                        head, headNanos, now);
            }
            return previous;
        });
    }

    /**
     * @param name the lock
     * @return the last sighting, or null
     */
    Sighting get(String name) {
        return byName.get(name);
    }

    /**
     * Forgets a name: it was granted to this client, or seen free with nobody in line.
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
