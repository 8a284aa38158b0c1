package io.dlock.dynamodb.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * What dlock reads from a lock's item: who holds it, under which token and record version, for
 * how long, and who waits in line. The attribute names are the item schema (see the package
 * documentation).
 *
 * @param owner the holder's owner id, or null when the lock is free
 * @param token the counter: the token of the current or last grant, 0 if never granted
 * @param rvn the record version, a fresh random id on every grant, renewal and release; null if
 *     never written
 * @param leaseMillis the holder's lease time in milliseconds, 0 when free
 * @param queue the waiters' tickets in arrival order (see {@link #ticket(String, int, long)}); empty
 *     when nobody waits in line
 */
record LockItem(String owner, long token, String rvn, long leaseMillis, List<String> queue) {

    /** Partition key: the lock name, a String. */
    static final String NAME = "name";
    /** The holder's owner id; absent when the lock is free. */
    static final String OWNER = "owner";
    /** The fencing counter, a Number: bumped by every grant, never reset. */
    static final String TOKEN = "token";
    /** The record version: a fresh random id written by every grant, renewal and release. */
    static final String RVN = "rvn";
    /** The holder's lease time in milliseconds, a Number. */
    static final String LEASE = "leaseMs";
    /** The holder's wall-clock time of its last write, ISO-8601: for people only, never for decisions. */
    static final String HOLDER_TIME = "holderTime";
    /** The waiters' tickets, a List of Strings in arrival order: {@code OWNERID.N/TICKETMS}. */
    static final String QUEUE = "queue";

    static final LockItem ABSENT = new LockItem(null, 0, null, 0, List.of());

    /** @return whether nobody holds the lock */
    boolean free() {
        return owner == null;
    }

    /** @return the first ticket in line, or null when nobody waits in line */
    String head() {
        return queue.isEmpty() ? null : queue.get(0);
    }

    /**
     * A waiter's ticket: its owner id, which time it queues in its attempt, and how long, in
     * milliseconds, it may leave its turn unused before other clients skip it. Never the same
     * ticket twice: a waiter that was skipped and queues again gets a new one.
     *
     * @param ownerId the waiting attempt's owner id
     * @param number how many tickets the attempt had before
     * @param ticketMillis the ticket time
     * @return the ticket, as stored in the queue
     */
    static String ticket(String ownerId, int number, long ticketMillis) {
        return ownerId + "." + number + "/" + ticketMillis;
    }

    /**
     * @param ticket a ticket from the queue
     * @return its ticket time in milliseconds
     * @throws IllegalStateException if it is not a ticket dlock writes
     */
    static long ticketMillis(String ticket) {
        int slash = ticket.lastIndexOf('/');
        try {
            long ms = slash <= 0 ? -1 : Long.parseLong(ticket, slash + 1, ticket.length(), 10);
            if (ms > 0) {
                return ms;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalStateException("its " + QUEUE + " holds '" + ticket + "', which is not OWNERID.N/TICKETMS");
    }

    /**
     * Reads an item as DynamoDB returned it.
     *
     * @param attributes the item, or null/empty when it does not exist
     * @return the item
     * @throws IllegalStateException if an attribute has a type or value dlock never writes
     */
    static LockItem of(Map<String, AttributeValue> attributes) {
        if (attributes == null || attributes.isEmpty()) {
            return ABSENT;
        }
        String owner = string(attributes, OWNER);
        long token = number(attributes, TOKEN);
        String rvn = string(attributes, RVN);
        long lease = number(attributes, LEASE);
        if (owner != null && (rvn == null || lease <= 0 || token <= 0)) {
            throw new IllegalStateException("it names an owner but lacks a positive " + TOKEN + ", an " + RVN
                    + " or a positive " + LEASE);
        }
        return new LockItem(owner, token, rvn, lease, queue(attributes));
    }

    private static List<String> queue(Map<String, AttributeValue> item) {
        AttributeValue v = item.get(QUEUE);
        if (v == null) {
            return List.of();
        }
        if (!v.hasL()) {
            throw new IllegalStateException("its attribute '" + QUEUE + "' is not a List");
        }
        List<String> tickets = new ArrayList<>(v.l().size());
        for (AttributeValue t : v.l()) {
            if (t.s() == null) {
                throw new IllegalStateException("its attribute '" + QUEUE + "' holds something other than Strings");
            }
            ticketMillis(t.s());
            tickets.add(t.s());
        }
        return Collections.unmodifiableList(tickets);
    }

    private static String string(Map<String, AttributeValue> item, String attribute) {
        AttributeValue v = item.get(attribute);
        if (v == null) {
            return null;
        }
        if (v.s() == null) {
            throw new IllegalStateException("its attribute '" + attribute + "' is not a String");
        }
        return v.s();
    }

    private static long number(Map<String, AttributeValue> item, String attribute) {
        AttributeValue v = item.get(attribute);
        if (v == null) {
            return 0;
        }
        if (v.n() == null) {
            throw new IllegalStateException("its attribute '" + attribute + "' is not a Number");
        }
        try {
            long n = Long.parseLong(v.n());
            if (n < 0) {
                throw new IllegalStateException("its attribute '" + attribute + "' is negative: " + v.n());
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalStateException("its attribute '" + attribute + "' is not a whole number that fits a long: "
                    + v.n(), e);
        }
    }
}
