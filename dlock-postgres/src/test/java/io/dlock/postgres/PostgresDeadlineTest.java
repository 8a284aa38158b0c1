package io.dlock.postgres;

import io.dlock.tck.OperationDeadline;
import org.junit.jupiter.api.Test;

/**
 * Every operation over a frozen network ends within the operation timeout plus a margin
 * ({@link OperationDeadline}), the clean-up after a failed acquire included, and a client where
 * nothing listens fails at once. Here that covers waiting for a free connection, opening one (a
 * frozen link accepts the TCP connection and never answers the start-up), and a statement whose
 * answer never comes (the connection is aborted at the deadline).
 */
class PostgresDeadlineTest {

    @Test
    void operationsEndWithinTheOperationTimeoutAndARefusalAtOnce() throws Exception {
        try (PostgresFixture fixture = new PostgresFixture()) {
            OperationDeadline.check(fixture);
        }
    }
}
