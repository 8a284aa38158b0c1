/**
 * The Redis backend of dlock: put {@code dlock-redis} on the classpath and open a
 * {@code redis://} or {@code rediss://} URI.
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
 * replicas have it, and fail the call if they do not within the operation timeout). Unknown
 * parameters are rejected. Encode special characters of the password with {@code %XX}.
 *
 * <p>What the backend keeps in Redis, for a prefix {@code P}: one string key {@code P lock:NAME}
 * per held lock, whose value is {@code OWNER:TOKEN} and whose expiry is the lease; one counter
 * {@code P fence} shared by every lock name, the source of fencing tokens; release notices on the
 * channel {@code P released:NAME}. Nothing is kept for a released lock.
 *
 * <p>Guarantees: {@link io.dlock.Capability#FENCING}, {@link io.dlock.Capability#NOTIFY_WAITERS}
 * and {@link io.dlock.Capability#HOLDER_QUERY}, on one Redis server. Replication to replicas is
 * asynchronous, so a failover can lose a grant and its token: the backend does not declare
 * {@link io.dlock.Capability#SURVIVES_SERVER_FAILOVER}. {@code waitReplicas} narrows that window
 * (a grant is only reported once that many replicas have it) but does not close it: Redis
 * failover may still promote a replica that missed a write (see {@code docs/REDIS-FAILOVER.md}).
 * Tokens still increase after a restart that lost data or a failover to a replica whose counter is
 * behind, as long as the new server's clock is not behind: every grant first raises the counter to
 * the server's time in microseconds, and a counter that grows by one per grant stays below that
 * time unless grants average a million a second, more than one Redis server can run. Redis Cluster
 * and Sentinel are not supported.
 */
package io.dlock.redis;
