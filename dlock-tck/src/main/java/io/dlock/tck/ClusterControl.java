package io.dlock.tck;

/**
 * Control of a replicated backend's members, for the failover rule (S9) and the randomized fault
 * run. Every call blocks until done.
 */
public interface ClusterControl {

    /** @return how many members the cluster has */
    int size();

    /**
     * Kills the current leader (or primary) without a clean shutdown and returns once the rest of
     * the cluster has had the chance to elect another. A backend without one leader kills the
     * member whose loss matters most to the locks in use (the primary serving the contended lock's
     * shard, or, where every member is equal as in a majority of independent servers, the members
     * in turn).
     *
     * @return a label of the member killed, for messages
     */
    String killLeader();

    /** Restarts every killed member, with what it persisted, and waits until it rejoined. */
    void restartKilled();

    /**
     * Whether {@link #isolateMember()} is supported.
     *
     * @return false by default
     */
    default boolean canIsolateMembers() {
        return false;
    }

    /**
     * Cuts one member off from its peers while clients can still reach it (a partition between
     * servers, not between clients and servers); which member is the implementation's choice, the
     * leader included. Lasts until {@link #healIsolation()}.
     *
     * @return a label of the member cut off, for messages
     * @throws UnsupportedOperationException unless {@link #canIsolateMembers()}
     */
    default String isolateMember() {
        throw new UnsupportedOperationException("this cluster fixture cannot cut a member off from its peers");
    }

    /** Reconnects every member cut off by {@link #isolateMember()} to its peers; a no-op if none is. */
    default void healIsolation() {
    }
}
