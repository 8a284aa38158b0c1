package io.dlock;

/**
 * Told when a {@link LeaderElection} becomes leader and when it stops. Both methods have empty
 * defaults, so an implementation overrides what it needs.
 *
 * <p><b>Ordering.</b> For one election, calls never overlap and alternate: {@code onElected(t)},
 * then exactly one {@code onRevoked(reason)} for that term, then perhaps {@code onElected(t2)}
 * with {@code t2 > t}, and so on. {@code onRevoked} is called <i>before</i> the lock can have been
 * granted to anyone else: for {@link RevokeReason#RESIGNED} and {@link RevokeReason#CLOSED} before
 * the lease is released, for {@link RevokeReason#LOST} as soon as this process's conservative
 * validity ends, which is before the server can give the lock away (see {@link Lease}).
 *
 * <p><b>Callbacks race with the next change.</b> A callback reports a change that has already
 * happened, and the next one may happen while it runs: leadership can be lost during (or right
 * after) {@code onElected}, and if {@code onElected} is still running when the lease ends,
 * {@code onRevoked} has to wait for it to return and may then come after another candidate was
 * elected. A process can also be paused (GC, swap) between any check and any action. So never
 * treat "I was elected" as permission for a side effect: pass the term with every write to the
 * resource the leader protects and let the resource reject a term lower than the highest it has
 * seen (see {@link LeaderElection#term()}).
 *
 * <p><b>Threads.</b> {@code onElected} runs on the election's own thread. {@code onRevoked} runs on
 * the thread that caused it: the caller of {@link LeaderElection#resign()} or
 * {@link LeaderElection#close()}, or a dlock thread of the client when the lease is lost. Return
 * quickly (start long work on your own thread); while a callback runs, the election does not
 * advance. An exception thrown by a callback is logged and otherwise ignored.
 */
public interface ElectionListener {

    /** A listener that does nothing: for candidates that poll {@link LeaderElection#isLeader()}. */
    ElectionListener NONE = new ElectionListener() { };

    /**
     * This candidate became the leader.
     *
     * @param term the fencing token of the lease behind this leadership: positive and greater
     *     than every earlier term of this election name, when the backend declares
     *     {@link Capability#FENCING}
     */
    default void onElected(long term) { }

    /**
     * This candidate stopped being the leader; the term passed to the matching
     * {@link #onElected(long)} must no longer be used.
     *
     * @param reason why
     */
    default void onRevoked(RevokeReason reason) { }
}
