/**
 * The Redis backend of dlock: put {@code dlock-redis} on the classpath and open a
 * {@code redis://} URI (one primary), {@code redis-sentinel://} (the primary the sentinels name),
 * {@code redis-cluster://} (a Redis Cluster) or {@code redlock://} (a majority of independent
 * primaries); each has a TLS form ({@code rediss://}, {@code rediss-sentinel://},
 * {@code rediss-cluster://}, {@code redlocks://}). Moving between them is a change of URI.
 *
 * <pre>{@code
 * try (LockClient client = LockClient.open("redis://user:secret@cache-1:6379/0?prefix=payments:")) {
 *     ...
 * }
 * }</pre>
 *
 * <p>URI: {@code redis[s]://[[user]:password@]host[:port][/database][?parameters]}.
 * {@code rediss} connects with TLS and verifies the server's host name against its certificate.
 * The port defaults to 6379 and the database to 0. Parameters: {@code prefix} (of every key and
 * channel, default {@code dlock:}), {@code poolSize} (command connections, default 16),
 * {@code waitReplicas} (default 0: after a grant or renewal, wait with {@code WAIT} until that many
 * replicas have it, and fail the call if they do not within the operation timeout),
 * {@code lockDelay} (an ISO-8601 duration such as {@code PT30S} or milliseconds; default 30 s, or
 * the client's default lease time if that is longer; {@code 0} turns it off: see below). Unknown
 * parameters are rejected. Encode special characters of the password with {@code %XX}.
 *
 * <p>What the backend keeps in Redis, for a prefix {@code P}: one string key {@code P lock:NAME}
 * per held lock, whose value is {@code OWNER:TOKEN} and whose expiry is the lease; one counter
 * {@code P fence} shared by every lock name, the source of fencing tokens; the lock-delay marker
 * {@code P epoch} (which server process wrote it and when); release notices on the channel
 * {@code P released:NAME}. Nothing is kept for a released lock.
 *
 * <p>The lock-delay ({@link io.dlock.Capability#SURVIVES_EMPTY_RESTART}): a Redis without
 * persistence that restarts has lost every lock while their holders' leases are still valid. So
 * when the marker is missing, was written by another server process (a restart, also from an old
 * snapshot, or a failover to a replica) or lies in the future, the acquire script writes it anew
 * and grants nothing for one lock-delay; no lease may be longer than the lock-delay (it is
 * {@link io.dlock.spi.LockBackend#maximumLeaseTime()}), so every lease from before has ended by
 * then, and old holders learn {@code SUPERSEDED} at their next renewal. Every client of one server
 * and prefix must use a lock-delay at least as long as the longest lease any of them takes. The
 * first acquire on a fresh server waits one lock-delay too (nothing tells a first start from a
 * restart that lost the data), and the backend logs one WARN per lock-delay. A Redis user that may
 * not run {@code INFO} still gets locks, but then only a missing marker starts a lock-delay.
 * {@code lockDelay=0} turns it off (and leases are unbounded, as before).
 *
 * <p>Guarantees: {@link io.dlock.Capability#FENCING}, {@link io.dlock.Capability#NOTIFY_WAITERS},
 * {@link io.dlock.Capability#HOLDER_QUERY} and, with the lock-delay on,
 * {@link io.dlock.Capability#SURVIVES_EMPTY_RESTART}, on one Redis server. Replication to replicas
 * is asynchronous, so a failover can lose a grant and its token: for {@code redis://} the backend
 * does not declare {@link io.dlock.Capability#SURVIVES_SERVER_FAILOVER} (Sentinel mode, below,
 * does). {@code waitReplicas} narrows that window (a grant is only reported once that many
 * replicas have it) but does not close it: Redis failover may still promote a replica that missed
 * a write (see {@code docs/REDIS-FAILOVER.md}).
 * The lock-delay holds grants off on a promoted replica for one lock-delay, which keeps exclusion
 * when the old primary stopped before the promotion, but not in a split brain, where an old
 * primary still reachable by some clients keeps renewing their leases.
 * Tokens still increase after a restart that lost data or a failover to a replica whose counter is
 * behind, as long as the new server's clock is not behind: every grant first raises the counter to
 * the server's time in microseconds, and a counter that grows by one per grant stays below that
 * time unless grants average a million a second, more than one Redis server can run.
 *
 * <p><b>Redis Sentinel</b>: {@code redis-sentinel://[[user]:password@]s1[:26379],s2/MASTER_NAME[?parameters]}
 * ({@code rediss-sentinel} for TLS to the sentinels and the data nodes). The hosts are sentinels,
 * the path is the name they monitor the primary by, and the parameters are those above plus
 * {@code database}, {@code sentinelUser} and {@code sentinelPassword} (the sentinels' own
 * credentials; the user info is the data nodes'). The primary is asked of the sentinels on first
 * use and again whenever a call meets a replica ({@code READONLY}), a loading server or a refused
 * connection; such a call runs once more on the new primary within its budget. With the
 * lock-delay on, a promoted replica grants nothing for one lock-delay, so this mode also declares
 * {@link io.dlock.Capability#SURVIVES_SERVER_FAILOVER}, assuming the old primary stops granting
 * and renewing when it loses the failover (not a split brain: run the data nodes with
 * {@code min-replicas-to-write 1} and leases shorter than the lock-delay by
 * {@code min-replicas-max-lag} plus a second), and a Redis user that may run {@code INFO} (without
 * it, Sentinel mode with a lock-delay refuses to work).
 *
 * <p><b>Redlock</b>: {@code redlock://[[user]:password@]h1:6379,h2:6379,h3:6379[/database][?prefix=&poolSize=&lockDelay=]}
 * ({@code redlocks://} for TLS) names N &ge; 3 independent primaries with the same credentials; a
 * lock is held while a majority holds its key (the keys above, on each node, each node with its own
 * lock-delay). The fencing token is the largest of the granting majority's counters (each raised to
 * its clock) plus one, written back to that majority while the key is still this grant's, so tokens
 * increase in hold order across node losses; with {@code appendonly yes} and
 * {@code appendfsync always} on every node they do so without any clock assumption. With the
 * lock-delay on it declares {@link io.dlock.Capability#SURVIVES_EMPTY_RESTART} and
 * {@link io.dlock.Capability#SURVIVES_SERVER_FAILOVER}: a minority of nodes may be down, frozen or
 * restarted empty. {@code waitReplicas} does not apply. The algorithm, the argument and its
 * assumptions (clocks, persistence, one node set per prefix) are in docs/ARCHITECTURE.md, "Redlock".
 *
 * <p><b>Redis Cluster</b>: {@code redis-cluster://[[user]:password@]host1:port1,host2:port2[?parameters]}
 * ({@code rediss-cluster} for TLS), the hosts being any nodes of the cluster (seeds); the same
 * parameters, except that there is no database and the prefix may not contain braces. Every key of
 * lock {@code NAME} lies in the hash slot of the whole name: {@code P{T}lock:NAME}, with the slot's
 * own counter {@code P{T}fence} and lock-delay marker {@code P{T}epoch}, where {@code T} is a hash
 * tag of that slot, so tokens strictly increase per name and move with the slot. Scripts go to the
 * slot's primary, following {@code MOVED} and {@code ASK} and waiting out {@code TRYAGAIN} and
 * {@code CLUSTERDOWN} within the operation timeout; a free lock in a slot being migrated is not
 * granted until the migration ends. With the lock-delay on, the mode also declares
 * {@link io.dlock.Capability#SURVIVES_SERVER_FAILOVER}: a promoted replica grants nothing for one
 * lock-delay; for a primary cut off from the others but still reachable by clients, the lock-delay
 * must be at least the longest lease plus the cluster's {@code cluster-node-timeout}. A moved or
 * failed-over slot waits one lock-delay before its next grant.
 */
package io.dlock.redis;
