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
 * <p>URI: {@code redis[s]://[[user]:password@]host[:port][/database][?prefix=...&poolSize=...]}.
 * {@code rediss} connects with TLS and verifies the server's host name against its certificate.
 * The port defaults to 6379, the database to 0, the key prefix to {@code dlock:} and the pool to
 * 16 connections.
 *
 * <p>What the backend keeps in Redis, for a prefix {@code P}: one string key {@code P lock:NAME}
 * per held lock, whose value is {@code OWNER:TOKEN} and whose expiry is the lease; one counter
 * {@code P fence} shared by every lock name, the source of fencing tokens; release notices on the
 * channel {@code P released:NAME}. Nothing is kept for a released lock.
 *
 * <p>Guarantees: {@link io.dlock.Capability#FENCING}, {@link io.dlock.Capability#NOTIFY_WAITERS}
 * and {@link io.dlock.Capability#HOLDER_QUERY} on a single Redis server. Replication to replicas
 * is asynchronous, so a failover can lose a grant and its token: the backend does not declare
 * {@link io.dlock.Capability#SURVIVES_SERVER_FAILOVER}. After a restart that lost data, tokens
 * still increase as long as the server's clock does not step back: the counter restarts from the
 * server's time in microseconds. Redis Cluster is not supported.
 */
package io.dlock.redis;
