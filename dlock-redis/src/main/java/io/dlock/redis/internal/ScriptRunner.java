package io.dlock.redis.internal;

import io.dlock.LockBackendException;
import java.util.List;
import java.util.function.Predicate;

/**
 * Where the backend's scripts run: one primary ({@link RedisConnections}), or the primary a
 * deployment's topology names for a key at the time of the call. Every call ends within its
 * budget; scripts are safe to repeat, so an implementation may retry one elsewhere within it.
 * Thread-safe.
 */
interface ScriptRunner extends AutoCloseable {

    /**
     * Runs one script within a budget and, if the reply says it wrote and the uri asks for
     * {@code waitReplicas}, waits within the budget until that many replicas have the write.
     *
     * @param script the script
     * @param keys its KEYS; all of one {@link #shard}
     * @param args its ARGV
     * @param operation what this is, for messages ("acquire", "renewal of 3 leases", ...)
     * @param lockName the lock concerned, or null
     * @param budgetNanos how long the whole call may take
     * @param wrote tells from the reply whether the script wrote; null for never
     * @return the raw reply: Long, byte[], List of those, or null
     * @throws LockBackendException if the call failed, ran out of time, or fewer replicas than
     *     asked acknowledged a write (its outcome is then unknown)
     */
    Object eval(Script script, List<String> keys, List<String> args, String operation, String lockName,
                long budgetNanos, Predicate<Object> wrote);

    /** {@link #eval(Script, List, List, String, String, long, Predicate)} for a script that never waits for replicas. */
    default Object eval(Script script, List<String> keys, List<String> args, String operation, String lockName,
                        long budgetNanos) {
        return eval(script, keys, args, operation, lockName, budgetNanos, null);
    }

    /**
     * Which lock names one script call may carry together (a renewal of many leases): names with
     * equal shards. One primary has one shard.
     *
     * @param name a lock name
     * @return its shard
     */
    default int shard(String name) {
        return 0;
    }

    /** Closes every connection. Never throws. */
    @Override
    void close();
}
