package io.dlock.dynamodb.internal;

import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * What dlock reads from a lock's item: who holds it, under which token and record version, for
 * how long. The attribute names are the item schema (see the package documentation).
 *
 * @param owner the holder's owner id, or null when the lock is free
 * @param token the counter: the token of the current or last grant, 0 if never granted
 * @param rvn the record version, a fresh random id on every write; null if never written
 * @param leaseMillis the holder's lease time in milliseconds, 0 when free
 */
record LockItem(String owner, long token, String rvn, long leaseMillis) {

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

    static final LockItem ABSENT = new LockItem(null, 0, null, 0);

    /** @return whether nobody holds the lock */
    boolean free() {
        return owner == null;
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
        return new LockItem(owner, token, rvn, lease);
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
