package io.dlock.etcd;

import io.dlock.tck.OperationDeadline;
import org.junit.jupiter.api.Test;

/**
 * Every operation over a frozen network (a paused server, a stalled route) ends within the
 * operation timeout plus a margin ({@link OperationDeadline}), the clean-up after a failed acquire
 * included, and a client where nothing listens fails at once. Here that covers the retried and
 * copied requests, and the delete of an abandoned attempt's key.
 */
class EtcdDeadlineTest {

    @Test
    void operationsEndWithinTheOperationTimeoutAndARefusalAtOnce() throws Exception {
        try (EtcdFixture fixture = new EtcdFixture()) {
            OperationDeadline.check(fixture);
        }
    }
}
