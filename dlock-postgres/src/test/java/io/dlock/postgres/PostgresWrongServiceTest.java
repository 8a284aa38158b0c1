package io.dlock.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.tck.ForeignServer;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A postgresql:// URI that names a port where something else listens: the client says so, as a
 * {@link LockConfigurationException} of kind {@code INCOMPATIBLE_SERVER}, within the operation
 * timeout, whether it first asks for TLS (the default {@code sslmode=prefer}: the answer to the
 * SSLRequest is neither yes nor no) or starts in plain text ({@code sslmode=disable}: the answer
 * to the start-up message is no PostgreSQL message). A listener that says nothing at all cannot be
 * told from a paused server: that stays a retryable failure at the operation timeout.
 */
class PostgresWrongServiceTest {

    private static final Duration OP_TIMEOUT = Duration.ofSeconds(1);
    /** The operation timeout plus slack for a loaded machine: the answer is judged when it arrives. */
    private static final Duration FAIL_BOUND = OP_TIMEOUT.plusMillis(1500);

    @Test
    void aServerThatDoesNotSpeakPostgresIsNamedSo() {
        for (String mode : new String[] {"prefer", "disable"}) {
            Map<String, byte[]> answers = ForeignServer.samples();
            ForeignServer.failures(answers, hostPort -> "postgresql://u:pw@" + hostPort + "/db?sslmode=" + mode, OP_TIMEOUT,
                    FAIL_BOUND).forEach((kind, f) -> {
                LockConfigurationException e = assertInstanceOf(LockConfigurationException.class, f.exception(),
                        mode + ", " + kind + ": " + f.message());
                assertEquals(Kind.INCOMPATIBLE_SERVER, e.kind(), kind);
                assertTrue(f.message().contains(f.hostPort()), f.message());
                assertTrue(f.message().contains("PostgreSQL"), f.message());
                assertFalse(f.message().contains("pw@"), f.message());
            });
        }
    }

    @Test
    void aListenerThatSaysNothingIsRetryable() {
        ForeignServer.failures(Map.of("silence", new byte[0]), hostPort -> "postgresql://u:pw@" + hostPort + "/db",
                OP_TIMEOUT, FAIL_BOUND).forEach((kind, f) -> assertTrue(f.exception().retryable(), f.message()));
    }
}
