package io.dlock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.tck.ForeignServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A redis:// URI that names a port where something else listens: the client says so, as a
 * {@link LockConfigurationException} ({@code TLS} for a TLS server, else
 * {@code INCOMPATIBLE_SERVER}).
 */
class RedisWrongServiceTest {

    private static final Duration OP_TIMEOUT = Duration.ofSeconds(1);
    /** The operation timeout plus slack for a loaded machine: the answer is judged when it arrives. */
    private static final Duration FAIL_BOUND = OP_TIMEOUT.plusMillis(1500);

    /**
     * A port where something other than Redis answers: the client says so, within the operation
     * timeout, whatever the bytes. Before, jedis read them as Redis replies: a length that the bytes
     * spelled made it allocate gigabytes (OutOfMemoryError) or fail with "Illegal Capacity:
     * -2139858884", or wait for that many bytes until the timeout; other bytes gave "Unknown reply"
     * with advice about restarts and maxclients.
     */
    @Test
    void aServerThatDoesNotSpeakRedisIsNamedSo() {
        Map<String, byte[]> answers = ForeignServer.samples();
        answers.remove("a Redis server"); // its error line is a Redis reply
        answers.put("a reply that is not PONG", "+OK\r\n".getBytes(StandardCharsets.US_ASCII));
        ForeignServer.failures(answers, hostPort -> "redis://" + hostPort, OP_TIMEOUT, FAIL_BOUND).forEach((kind, f) -> {
            assertTrue(f.message().startsWith("the server at " + f.hostPort() + " does not speak the Redis protocol: "
                    + "it answered PING with '"), kind + ": " + f.message());
            assertTrue(f.message().contains("check the host and port in the uri"), f.message());
            assertEquals(kind.equals("a TLS server"), f.message().contains("use rediss://"), f.message());
            // a Redis answers PING with a reply, always: no retry can help, the uri must change
            LockConfigurationException e = assertInstanceOf(LockConfigurationException.class, f.exception(), kind);
            assertEquals(kind.equals("a TLS server") ? Kind.TLS : Kind.INCOMPATIBLE_SERVER, e.kind(), kind);
        });
    }
}
