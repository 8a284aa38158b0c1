package io.dlock;

/**
 * An optional guarantee or feature a backend declares. The TCK skips, rather than fails, the
 * rules that need a capability a backend does not declare.
 */
public enum Capability {
    /** Every grant carries a fencing token that strictly increases per lock name. */
    FENCING,
    /** Waiters are woken by the server when a lock is released, rather than only by polling. */
    NOTIFY_WAITERS,
    /** Contenders that queue on the server are granted the lock in arrival order. */
    FAIR,
    /** Exclusion and token order survive the failure of a server (leader) in a replicated deployment. */
    SURVIVES_SERVER_FAILOVER,
    /**
     * Exclusion and token order survive a restart of the server that loses its locks (a server
     * without persistence, or one restored from an old backup): after such a restart the backend
     * grants nobody a lock until every lease granted before it has ended on its holder's clock
     * (a lock-delay), and tokens keep increasing.
     */
    SURVIVES_EMPTY_RESTART,
    /** {@link LockClient#holder(String)} can tell who holds a lock. */
    HOLDER_QUERY
}
