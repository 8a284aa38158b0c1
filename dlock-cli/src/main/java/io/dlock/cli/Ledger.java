package io.dlock.cli;

/**
 * The demo's payment ledger: the charges of each order, and for fenced reads and writes the
 * highest fencing token seen per order, refusing a lower one. In memory ({@link MemoryLedger}), or
 * a PostgreSQL table guarded by a fence column ({@link PostgresLedger}). Thread-safe.
 */
interface Ledger extends AutoCloseable {

    /**
     * Reads, without a token: has the order been charged?
     *
     * @param order the order
     * @return true if charged at least once
     */
    boolean isCharged(String order);

    /**
     * Charges, without a token.
     *
     * @param order the order
     */
    void charge(String order);

    /**
     * Reads under a fencing token: records the token as seen.
     *
     * @param order the order
     * @param token the reader's fencing token
     * @return true if charged; false if not charged
     * @throws StaleToken if a higher token was seen for this order
     */
    boolean isCharged(String order, long token);

    /**
     * Charges under a fencing token.
     *
     * @param order the order
     * @param token the writer's fencing token
     * @throws StaleToken if a higher token was seen for this order; nothing is charged
     */
    void charge(String order, long token);

    /** @return how many charges were made in all */
    int charges();

    /** @return how many orders were charged more than once, counted once per extra charge */
    int doubleCharges();

    /** @return how many reads and writes were rejected for a stale token */
    int staleRejected();

    /** Frees what the ledger holds (nothing in memory). */
    @Override
    default void close() {
    }

    /** A read or write with a token lower than one the ledger has already seen for the order. */
    final class StaleToken extends RuntimeException {
        private static final long serialVersionUID = 1L;

        final long token;
        final long highest;

        StaleToken(String order, long token, long highest) {
            super("stale token " + token + " for " + order + ": token " + highest + " was already seen");
            this.token = token;
            this.highest = highest;
        }
    }
}
