package io.dlock.dynamodb;

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
 * A DynamoDB endpoint where something else listens: the client says what it found, in time. Before,
 * bytes that are not HTTP gave "could not reach ...: Unable to execute HTTP request: Invalid Http
 * response", and an HTTP server that is not DynamoDB "failed: HTTP 404 (HTTP 404)". Both are a
 * {@link LockConfigurationException} of kind {@code INCOMPATIBLE_SERVER}.
 */
class DynamoDbWrongServiceTest {

    private static final Duration OP_TIMEOUT = Duration.ofSeconds(2);
    /** The operation timeout plus the calls' grace and slack for a loaded machine. */
    private static final Duration FAIL_BOUND = OP_TIMEOUT.plusMillis(1500);

    @Test
    void anEndpointThatIsNotDynamoDbIsNamedSo() {
        Map<String, byte[]> answers = ForeignServer.samples();
        // an alert without an end of line that is never closed: the HTTP client waits for the rest of the
        // status line, and the call ends at the timeout (a real TLS server closes the connection after it)
        answers.remove("a TLS server");
        answers.put("an HTTP server", ("HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: 9\r\n"
                + "Connection: close\r\n\r\nnot here!").getBytes(StandardCharsets.US_ASCII));
        ForeignServer.failures(answers, hostPort -> DynamoDbFixture.uri("dlock_foreign", hostPort), OP_TIMEOUT,
                FAIL_BOUND).forEach((kind, f) -> {
                    String expected = kind.equals("an HTTP server")
                            ? "http://" + f.hostPort() + " answered HTTP 404 without a DynamoDB error: check that the "
                            + "endpoint is DynamoDB's"
                            : "http://" + f.hostPort() + " does not speak HTTP: it answered with something that is "
                            + "not an HTTP response";
                    assertTrue(f.message().contains(expected), kind + ": " + f.message());
                    // no retry can help: the endpoint must change
                    assertEquals(Kind.INCOMPATIBLE_SERVER,
                            assertInstanceOf(LockConfigurationException.class, f.exception(), kind).kind(), kind);
                });
    }
}
