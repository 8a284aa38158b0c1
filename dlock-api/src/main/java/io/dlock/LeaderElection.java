package io.dlock;

import io.dlock.internal.DefaultLeaderElection;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Leader election over any {@link LockClient}: every candidate contends for the same lock, and the
 * one holding it leads. The leadership is a {@link Lease}, renewed in the background; its
 * {@linkplain Lease#fencingToken() fencing token} is the leader's <b>term</b>.
 *
 * <pre>{@code
 * try (LockClient client = LockClient.open("zookeeper://zk1:2181");
 *      LeaderElection election = LeaderElection.create(client, "billing-scheduler",
 *              new ElectionListener() {
 *                  public void onElected(long term) { scheduler.startLeading(term); }
 *                  public void onRevoked(RevokeReason reason) { scheduler.stopLeading(); }
 *              }).start()) {
 *     ...
 * }
 * }</pre>
 *
 * <p><b>Lifecycle.</b> {@link #create} makes a candidate that does nothing yet; {@link #start()}
 * starts contending on one daemon thread of this election ({@code dlock-election-N-NAME}) and
 * keeps contending for as long as the election is open: when leadership is lost it tries again,
 * and after {@link #resign()} it stays out for {@link ElectionOptions#resignPause()} so that
 * another candidate can take over, then contends again. {@link #close()} ends it: it revokes the
 * leadership (telling the listener first), releases the lock and stops the thread. Close the
 * election before its client: a client closed under a leading election releases the lock without
 * telling the election, which then notices within a tenth of a second and reports
 * {@link RevokeReason#LOST}.
 *
 * <p><b>Guarantees.</b> With a backend that honours dlock's contract (the TCK's rules E1 to E4):
 * at most one candidate holds a valid leadership at any moment, terms strictly increase from one
 * leader to the next (with {@link Capability#FENCING}), a crashed leader is replaced once its lease
 * runs out, and {@link ElectionListener#onRevoked} is called before the lock can have been granted
 * to anyone else.
 *
 * <p><b>Races, and fencing with the term.</b> "I am the leader" is only ever true <i>as of</i> the
 * check: {@link #isLeader()} may turn false right after it returned true, a listener callback may
 * race with the next change (see {@link ElectionListener}), and a process can be paused between
 * any check and any action for longer than its lease. What makes a leader's work safe is the term:
 * read it when elected ({@link ElectionListener#onElected(long)} or {@link #term()}), send it with
 * every write to the resource the leader controls, and have that resource remember the highest
 * term it has accepted and refuse any lower one. A deposed leader that wakes up late then carries
 * a lower term than its successor, and its writes are rejected instead of overwriting the new
 * leader's:
 *
 * <pre>{@code
 * // the resource (e.g. in one SQL statement): accept only if term >= the highest term seen
 * UPDATE jobs SET state = ?, term = ? WHERE id = ? AND term <= ?
 * }</pre>
 *
 * <p>Thread-safe.
 */
public interface LeaderElection extends AutoCloseable {

    /**
     * Creates a candidate with default {@link ElectionOptions}. It does not contend until
     * {@link #start()}; unstarted, it can still observe the leader with {@link #leader()}.
     *
     * @param client the client to contend through; it must stay open while the election is
     * @param name the name of the election, which is the name of the lock behind it
     * @param listener told of elections and revocations; {@link ElectionListener#NONE} for none
     * @return the candidate
     * @throws IllegalArgumentException if an argument is null, or the name is not a valid lock
     *     name, or the client's default lease time is not allowed by its backend
     * @throws IllegalStateException if the client is closed
     */
    static LeaderElection create(LockClient client, String name, ElectionListener listener) {
        return create(client, name, ElectionOptions.defaults(), listener);
    }

    /**
     * Creates a candidate. It does not contend until {@link #start()}; unstarted, it can still
     * observe the leader with {@link #leader()}.
     *
     * @param client the client to contend through; it must stay open while the election is
     * @param name the name of the election, which is the name of the lock behind it
     * @param options the lease behind the leadership and the pauses between attempts
     * @param listener told of elections and revocations; {@link ElectionListener#NONE} for none
     * @return the candidate
     * @throws IllegalArgumentException if an argument is null, or the name is not a valid lock
     *     name, or the lease time is not allowed by the client's backend
     * @throws IllegalStateException if the client is closed
     */
    static LeaderElection create(LockClient client, String name, ElectionOptions options, ElectionListener listener) {
        return new DefaultLeaderElection(client, name, options, listener);
    }

    /** @return the election's name, which is the name of the lock behind it */
    String name();

    /**
     * Starts contending, on this election's own thread. Idempotent.
     *
     * @return this election
     * @throws IllegalStateException if the election is closed
     */
    LeaderElection start();

    /**
     * Tells whether this candidate leads now: it holds the lock and its lease is valid on this
     * process's clock. True only as of the call (see the class comment on races).
     *
     * @return true while leading
     */
    boolean isLeader();

    /**
     * Returns the term of the current leadership: the fencing token of the lease behind it,
     * positive and greater than the term of every earlier leader of this election (with
     * {@link Capability#FENCING}). Pass it with every write the leader makes, so that the
     * resource can reject a deposed leader's late writes.
     *
     * @return the term while leading ({@link #isLeader()}), otherwise empty
     */
    OptionalLong term();

    /**
     * Returns how long the current leadership stays valid if no renewal succeeds: the
     * {@linkplain Lease#remaining() remaining validity} of the lease behind it, on this process's
     * clock. A process that must stop leading work before another leader can start (a child
     * process, say) can use it as a deadline. Read {@link #term()} before and after to be sure
     * the figure belongs to the term in hand.
     *
     * @return the remaining validity while leading, otherwise {@link Duration#ZERO}
     */
    Duration remaining();

    /**
     * Asks the backend who leads now, through {@link LockClient#holder(String)}. Works on any
     * election, started or not, so a process can observe an election it does not take part in.
     * The holder's {@link LockHolder#fencingToken()} is the leader's term, which identifies the
     * leadership; its owner id is per grant, not a process name.
     *
     * @return the current leader, or empty if nobody leads
     * @throws UnsupportedOperationException if the backend does not declare
     *     {@link Capability#HOLDER_QUERY}
     * @throws LockBackendException if the backend fails or times out
     * @throws IllegalStateException if the client is closed
     */
    Optional<LockHolder> leader();

    /**
     * Gives up the leadership, if this candidate leads: calls
     * {@link ElectionListener#onRevoked(RevokeReason) onRevoked(RESIGNED)} on the caller's thread,
     * then releases the lock so that a waiting candidate takes over promptly, and stays out of the
     * contest for {@link ElectionOptions#resignPause()} before contending again. Does nothing if
     * this candidate does not lead.
     *
     * @return true if this call ended a leadership
     */
    boolean resign();

    /**
     * Stops the election: if leading, calls
     * {@link ElectionListener#onRevoked(RevokeReason) onRevoked(CLOSED)} on the caller's thread and
     * then releases the lock; stops contending and waits for the election's thread to end.
     * Idempotent; never throws for backend failures. Does not close the client.
     */
    @Override
    void close();
}
