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
     * the cluster has had the chance to elect another.
     *
     * @return a label of the member killed, for messages
     */
    String killLeader();

    /** Restarts every killed member, with what it persisted, and waits until it rejoined. */
    void restartKilled();
}
