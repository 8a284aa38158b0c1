package io.dlock.tck;

import io.dlock.spi.support.Arguments;
import java.util.Locale;
import java.util.Optional;

/**
 * The TCK's rules: an ID that starts the name of the test method that checks it, a title, and a
 * hint printed when it fails. {@code docs/TCK.md} explains each one.
 */
public enum Rule {
    /** S1: exclusion under contention. */
    S1("exclusion under contention",
            "the acquire must be atomic on the server (one conditional write / one script / one queue), and validity must start from the request's send time"),
    /** S2: fencing tokens strictly increase. */
    S2("fencing tokens strictly increase",
            "the token must come from state that survives release, expiry and client restarts (a counter bumped in the same atomic step as the grant, a revision, a zxid)"),
    /** S3: stale release and renew are no-ops. */
    S3("stale release and renew are no-ops",
            "release and renew must check the owner id (and token) on the server, in the same atomic step as the delete or extend"),
    /** S4: timeout, interrupt and cancel strand nothing. */
    S4("timeout, interrupt and cancel strand nothing",
            "AcquireAttempt.abandon() must remove queue entries and undo a grant whose answer was lost; a grant arriving after cancellation must be released"),
    /** S5: threads sharing one client exclude each other. */
    S5("threads sharing one client exclude each other",
            "each acquisition needs its own owner id and its own server-side entry; never key the lock by client, connection or session alone"),
    /** S6: lock names map injectively. */
    S6("lock names map injectively",
            "the encoding of names into keys or paths must be reversible: escape every separator and escape character, and never truncate or case-fold"),
    /** S7: a lost lease is reported no later than server-side expiry. */
    S7("a lost lease is reported no later than server-side expiry",
            "validity must be computed from the request's send time minus a drift margin, and the backend must throw (not hang, not report success) when it cannot reach the server"),
    /** S8: a stalled holder's stale write is rejected by fencing. */
    S8("a stalled holder's stale write is rejected by fencing",
            "the token of a grant after an expiry must exceed the expired holder's token, on the server, whatever the client's clocks"),
    /** S9: exclusion and token order survive server failover. */
    S9("exclusion and token order survive server failover",
            "a grant must be acknowledged only once a quorum has it, and a new leader must never reissue a token; a backend without that must not declare SURVIVES_SERVER_FAILOVER"),
    /** S10: a skewed wall clock changes nothing. */
    S10("a skewed wall clock changes nothing",
            "never compare wall-clock times across machines: expiry must be decided by the server's own clock or by the waiter's monotonic clock"),
    /** S11: a server that restarts empty lets nobody in while an old lease can still be valid. */
    S11("a server that restarts empty lets nobody in while an old lease can still be valid",
            "after a restart that lost the locks, either refuse grants for the longest lease a client may hold (a lock-delay), or make every old holder's renewal fail before anyone else is granted; tokens must keep increasing"),
    /** L1: release hands over promptly to a waiter. */
    L1("release hands over promptly to a waiter",
            "release must wake waiters (notification) or waiters must poll with a bounded interval"),
    /** L2: a crashed holder's lock frees after the lease. */
    L2("a crashed holder's lock frees after the lease",
            "the server must expire leases on its own (key TTL, session timeout, lease TTL), neither early nor never"),
    /** L3: auto-renewal holds a lock for many lease times. */
    L3("auto-renewal holds a lock for many lease times",
            "renew must extend the server-side lease for the full lease time, owner-checked, and batched renewals must answer one result per lease"),
    /** L4: wait timeouts are honoured. */
    L4("wait timeouts are honoured",
            "AcquireAttempt.turn must return at once (its stage is the wait, not the call), and every backend call must respect the operation timeout"),
    /** L5: every contender eventually wins (in order where FAIR). */
    L5("every contender eventually wins (in order where FAIR)",
            "waiters must be woken or poll; a FAIR backend must grant in queue order and wake only the next waiter"),
    /** L6: clients recover after a server restart. */
    L6("clients recover after a server restart",
            "connections must be re-established after a restart (no stale pooled connection kept forever), held leases reported lost, and tokens must not restart after the server comes back"),
    /** L7: close() releases locks and leaks no threads. */
    L7("close() releases locks and leaks no threads",
            "LockBackend.close() must stop every thread the backend started and close its connections; the core releases held leases first"),
    /** L8: no contender starves while others re-acquire in a tight loop. */
    L8("no contender starves while others re-acquire in a tight loop",
            "a client that releases and asks again at once must not always win: queue waiters on the server (FAIR), or give a waiter that has been refused a ticket that a fresh request must respect"),
    /** L9: close() is bounded however many leases a client holds. */
    L9("close() is bounded however many leases a client holds",
            "release, renew and every other backend call must honour the operation timeout, also when close() releases many leases at once against a backend that does not answer"),
    /** L10: a client's threads do not grow with its waiters. */
    L10("a client's threads do not grow with its waiters",
            "a wait (AcquireAttempt.turn) must be completed by shared machinery (one subscription connection, a watch, the core's timer): never start or hold a thread per waiter"),
    /** L11: asynchronous waits hold no thread. */
    L11("asynchronous waits hold no thread",
            "AcquireAttempt.turn must return at once a stage that a notification completes (or keep the default, which the core's timer paces): never block in it, nor start or hold a thread per waiting attempt; abandon() must leave a cancelled waiter's place for the next"),
    /** V1: bad names, lease times and waits are rejected clearly. */
    V1("bad names, lease times and waits are rejected clearly",
            "validation belongs in the core; a backend's own limits go in minimumLeaseTime()/maximumLeaseTime()"),
    /** V2: released leases are inert and release is idempotent. */
    V2("released leases are inert and release is idempotent",
            "release must be idempotent on the server (owner-checked delete) and never throw for 'not held'"),
    /** V3: an unreachable backend fails in time. */
    V3("an unreachable backend fails in time",
            "connect and read timeouts must be derived from the operation timeout; map every client exception to LockBackendException, and no answer to a retryable one, never to LockConfigurationException"),
    /** V4: a configuration failure is reported as LockConfigurationException of its kind. */
    V4("a configuration failure is reported as its kind",
            "map what the server or client library says in typed form (error codes, status codes, exception types) about rejected credentials, denied permissions, missing resources, TLS and unusable servers to LockConfigurationException of that kind, at once, without retrying"),
    /** N1: a randomized fault run keeps the fenced resource safe. */
    N1("a randomized fault run keeps the fenced resource safe",
            "read the run's seed and history summary; replay it with -Ddlock.tck.seed; a stale write accepted means tokens went backwards, an overlap means exclusion failed"),
    /** N2: after faults stop, the lock is granted again. */
    N2("after faults stop, the lock is granted again within two lease times",
            "nothing may keep a lock once its client gave up on it: abandon() must delete late-applied creates and queue entries, and no session or lease may keep renewing a key its acquisition abandoned"),
    /** B2: renew is owner-checked, per lease, in order. */
    B2("renew is owner-checked, per lease, in order",
            "renew must compare the owner id (and token) on the server for each lease, answer NOT_HELD (not UNKNOWN, not an exception) for a lease not held, never re-create a missing entry, and return one outcome per lease in the order of its argument"),
    /** B3: release is owner-checked and answers what it did. */
    B3("release is owner-checked and answers what it did",
            "release must delete only the entry with the caller's owner id, in one atomic step, and answer whether it deleted it; 'not held' is NOT_HELD, not an exception"),
    /** E1: at most one valid leader, terms increase. */
    E1("at most one valid leader, terms increase",
            "a leadership is a lease: exclusion (S1) and token order (S2) must hold across clients, and release must reach the server only after the holder stopped using the lease"),
    /** E2: leader crash gives a new leader after the lease. */
    E2("leader crash gives a new leader after the lease",
            "the server must expire a crashed holder's lease on its own (L2), and the holder's client must report the loss before the server can grant the lock again (S7)"),
    /** E3: resign hands over promptly. */
    E3("resign hands over promptly",
            "release must wake waiting candidates, or they must poll with a bounded interval (L1); a candidate that resigned must contend again after its pause"),
    /** E4: observers see the current leader. */
    E4("observers see the current leader",
            "LockBackend.holder(name) must read the server's current holder (not a cache) and return the holder's fencing token; a released lock must show no holder");

    private final String title;
    private final String hint;

    Rule(String title, String hint) {
        this.title = title;
        this.hint = hint;
    }

    /** @return a one-line description */
    public String title() {
        return title;
    }

    /** @return what to check when the rule fails */
    public String hint() {
        return hint;
    }

    /**
     * Finds the rule a test method checks, by the ID its name starts with.
     *
     * @param methodName e.g. {@code S1_exclusionUnderContention}
     * @return the rule, if the name starts with an ID and an underscore
     */
    public static Optional<Rule> ofMethod(String methodName) {
        Arguments.notNull("methodName", methodName);
        int us = methodName.indexOf('_');
        if (us <= 0) {
            return Optional.empty();
        }
        try {
            return Optional.of(valueOf(methodName.substring(0, us).toUpperCase(Locale.ROOT)));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /**
     * Formats a failure message with the rule's hint.
     *
     * @param what what went wrong
     * @return the message
     */
    public String failure(String what) {
        Arguments.notNull("what", what);
        return name() + " (" + title + ") violated: " + what + "\n  if this fails, check: " + hint;
    }
}
