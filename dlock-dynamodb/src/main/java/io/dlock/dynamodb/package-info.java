/**
 * The DynamoDB backend of dlock: put {@code dlock-dynamodb} on the classpath and open a
 * {@code dynamodb://} URI.
 *
 * <pre>{@code
 * try (LockClient client = LockClient.open("dynamodb://app-locks?region=eu-west-1")) {
 *     ...
 * }
 * }</pre>
 *
 * <p>URI: {@code dynamodb://TABLE?region=REGION[&parameters]}. Parameters: {@code region} (else
 * the SDK's default region chain), {@code endpoint} (an {@code http(s)://host:port} URL, for
 * DynamoDB Local or a VPC endpoint), {@code createTable=true} (create the table, on-demand, if it
 * does not exist, and wait up to 60 s until it is active), {@code accessKeyId},
 * {@code secretAccessKey} and {@code sessionToken}, or {@code profile} (else the SDK's default
 * credential chain), {@code renewal=auto|update|transaction} (how many leases are renewed at once,
 * see below). Unknown parameters are rejected. Credentials never appear in messages or logs.
 *
 * <p>The table has a String partition key {@code name} and no sort key. One item per lock name:
 * {@code name} (the lock name as it is, at most 1,536 bytes of UTF-8, below DynamoDB's 2,048),
 * {@code owner} (the holder's owner id; absent when free), {@code token} (a Number: the fencing
 * counter, bumped by every grant and never reset), {@code rvn} (the record version: a fresh
 * random id written by every grant, renewal and release), {@code leaseMs} (the holder's lease
 * time), {@code holderTime} (the holder's wall-clock time of its last write, for people only) and
 * {@code queue} (the waiters' tickets, a List of Strings, while any wait in line).
 * The item of a released lock stays, with its counter, so tokens never go backwards: one small
 * item per name ever locked.
 *
 * <p>Acquire is one conditional {@code UpdateItem} that sets the owner and lease and bumps the
 * counter, returning the new token; release and renewal are conditional on the owner and token.
 * An uncontended acquire and release are two requests. DynamoDB keeps no time that clients could
 * share, so a lock that its holder stopped renewing is taken over by the waiter rule: a waiter may
 * write over a holder only after it has seen the item's record version unchanged for the holder's
 * whole lease time on its own monotonic clock, and only with a write conditional on that version.
 * Wall clocks are never compared. Waiting is polling, one waiter per name per client, with
 * strongly consistent reads; a waiting attempt queues a ticket in the item, and a free lock can
 * only be taken by the first ticket in line (a client that releases and asks again at once queues
 * behind the waiters). A ticket whose waiter leaves its turn unused for its ticket time (four of
 * its longest polls, at most its lease time), counted on the other client's own clock, is skipped,
 * so a waiter that died does not block the lock for good.
 *
 * <p>Permissions: {@code dynamodb:UpdateItem} and {@code dynamodb:GetItem} on the table;
 * {@code dynamodb:TransactWriteItems} with {@code renewal=transaction};
 * {@code dynamodb:DescribeTable} and {@code dynamodb:CreateTable} with {@code createTable=true}.
 * A missing one fails with a {@link io.dlock.LockBackendException} that names it.
 *
 * <p>Renewal: {@code renewal=update} renews each lease with one conditional {@code UpdateItem} per
 * renew interval (one write unit), eight at a time. {@code renewal=transaction} renews up to 100
 * leases in one {@code TransactWriteItems} (a hundredth of the requests, but twice the write units,
 * and a transaction is cancelled as a whole: the leases of a cancelled one are renewed one by
 * one). {@code renewal=auto}, the default, renews fewer than 100 leases due at once by single
 * updates and more by transactions, so the request rate stays bounded however many locks a client
 * holds; if the principal may not call {@code TransactWriteItems} it logs one warning and renews
 * by single updates from then on.
 *
 * <p>Guarantees: {@link io.dlock.Capability#FENCING} and {@link io.dlock.Capability#HOLDER_QUERY}.
 * Waiters are not notified (they poll); they are served in ticket order, but a waiter that
 * stalls is skipped and queues again, so {@link io.dlock.Capability#FAIR} is not declared. The
 * backend does not declare
 * {@link io.dlock.Capability#SURVIVES_SERVER_FAILOVER}: DynamoDB is a regional service whose
 * replication and failover clients never see, so the rule has nothing to test here; a global
 * table replicates across regions asynchronously and must not be used for locks.
 */
package io.dlock.dynamodb;
