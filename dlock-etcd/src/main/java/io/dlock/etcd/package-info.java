/**
 * The etcd backend of dlock: put {@code dlock-etcd} on the classpath and open an {@code etcd://}
 * or {@code etcds://} URI.
 *
 * <pre>{@code
 * try (LockClient client = LockClient.open("etcd://etcd-1:2379,etcd-2:2379,etcd-3:2379?prefix=payments/")) {
 *     ...
 * }
 * }</pre>
 *
 * <p>URI: {@code etcd[s]://[user:password@]host[:port][,host[:port]...][?parameters]}; the port
 * defaults to 2379. {@code etcds} connects with TLS and verifies each server's host name against
 * its certificate. Parameters: {@code prefix} (of every key, default {@code dlock/});
 * {@code caFile} (PEM certificates to trust instead of the JVM's default); {@code certFile} and
 * {@code keyFile} (a PEM client certificate and its PKCS#8 key, for servers that check clients).
 * Unknown parameters are rejected. Encode special characters of the password with {@code %XX}.
 *
 * <p>What the backend keeps in etcd, for a prefix {@code P}: one key per acquisition, held or
 * queued, whose value is the acquisition's owner id and whose lease is one of the client's etcd
 * leases: {@code P locks/NAME/CLIENT}, the client's key of the name that its acquisitions put again
 * one after another, or {@code P locks/NAME/OWNER} for an acquisition that overlaps another of the
 * same client ({@code NAME} is the lock name with every UTF-8 byte outside {@code [A-Za-z0-9_-]}
 * written as {@code %XX}; {@code CLIENT} is random per client). The key with the lowest create
 * revision holds the lock, and that revision is the fencing token; the others wait, each for the
 * deletion of the key just before it. A client keeps one etcd lease per distinct TTL (the lease
 * time rounded up to whole seconds), so renewing any number of locks costs one keep-alive per
 * lease. Besides, {@code P guards/LEASE}, an empty key on each such lease that is written only when
 * an acquisition ends while a copy of its create may still be in flight after a network fault, so
 * that the copy can never make a key later; it goes with the lease. Nothing is kept for a released
 * lock. With etcd authentication, the user needs read and write access to the whole prefix.
 *
 * <p>Guarantees: {@link io.dlock.Capability#FENCING} (etcd revisions only grow, across restarts
 * of the cluster that keep its data), {@link io.dlock.Capability#NOTIFY_WAITERS},
 * {@link io.dlock.Capability#FAIR} (first come, first served, by create revision),
 * {@link io.dlock.Capability#HOLDER_QUERY} and {@link io.dlock.Capability#SURVIVES_SERVER_FAILOVER}:
 * every write goes through etcd's Raft log and every read is linearizable, so losing a minority of
 * members, the leader included, loses no grant. Lease times are at least 2 seconds.
 */
package io.dlock.etcd;
