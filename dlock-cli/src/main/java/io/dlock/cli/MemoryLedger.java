package io.dlock.cli;

import java.util.HashMap;
import java.util.Map;

/**
 * The demo's payment ledger in memory, standing in for the payment provider and its database: it
 * counts the charges of each order and, for fenced writes, keeps the highest fencing token it has
 * seen per order and rejects any lower one (as a table storing the token with the row would, with
 * {@code UPDATE ... WHERE fence <= ?}: {@link PostgresLedger}). Thread-safe.
 */
final class MemoryLedger implements Ledger {

    private static final class Row {
        int charges;
        long highestToken;
    }

    private final Map<String, Row> rows = new HashMap<>();
    private int staleRejected;

    private Row row(String order) {
        return rows.computeIfAbsent(order, k -> new Row());
    }

    /**
     * Reads, without a token: has the order been charged?
     *
     * @param order the order
     * @return true if charged at least once
     */
    @Override
    public synchronized boolean isCharged(String order) {
        return row(order).charges > 0;
    }

    /**
     * Charges, without a token.
     *
     * @param order the order
     */
    @Override
    public synchronized void charge(String order) {
        row(order).charges++;
    }

    /**
     * Reads under a fencing token: records the token as seen.
     *
     * @param order the order
     * @param token the reader's fencing token
     * @return true if charged; false if not charged
     * @throws StaleToken if a higher token was seen for this order
     */
    @Override
    public synchronized boolean isCharged(String order, long token) {
        Row r = row(order);
        check(r, order, token);
        return r.charges > 0;
    }

    /**
     * Charges under a fencing token.
     *
     * @param order the order
     * @param token the writer's fencing token
     * @throws StaleToken if a higher token was seen for this order; nothing is charged
     */
    @Override
    public synchronized void charge(String order, long token) {
        Row r = row(order);
        check(r, order, token);
        r.charges++;
    }

    private void check(Row r, String order, long token) {
        if (token < r.highestToken) {
            staleRejected++;
            throw new StaleToken(order, token, r.highestToken);
        }
        r.highestToken = token;
    }

    /** @return how many charges were made in all */
    @Override
    public synchronized int charges() {
        return rows.values().stream().mapToInt(r -> r.charges).sum();
    }

    /** @return how many orders were charged more than once, counted once per extra charge */
    @Override
    public synchronized int doubleCharges() {
        return rows.values().stream().mapToInt(r -> Math.max(0, r.charges - 1)).sum();
    }

    /** @return how many orders were charged at least once */
    synchronized int ordersCharged() {
        return (int) rows.values().stream().filter(r -> r.charges > 0).count();
    }

    /** @return how many reads and writes were rejected for a stale token */
    @Override
    public synchronized int staleRejected() {
        return staleRejected;
    }
}
