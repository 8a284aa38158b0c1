package io.dlock.etcd;

import io.dlock.tck.OperationDeadline;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Every operation over a frozen network (a paused server, a stalled route) ends within the
 * operation timeout plus a margin, the clean-up after a failed acquire included:
 * the retried and copied requests, and the delete of an abandoned attempt's key.
 */
class EtcdDeadlineTest {

    /** Long enough that clean-up done on the caller's time (it used to take a quarter of it) shows. */
    private static final Duration TIMEOUT = Duration.ofSeconds(3);
    /** For scheduling on the shared 2-core machine; the old lateness was 750 ms at this timeout. */
    private static final Duration MARGIN = Duration.ofMillis(400);

    @Test
    void everyOperationEndsWithinTheOperationTimeout() throws Exception {
        try (EtcdFixture fixture = new EtcdFixture()) {
            OperationDeadline.check(fixture, TIMEOUT, MARGIN);
        }
    }
}
