package io.dlock.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.tck.ForeignServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * An etcd:// URI that names a port where something else listens: the client says that the server
 * does not speak etcd's protocol, at once. Before, it resent the request until the operation
 * timeout and then reported gRPC's "INTERNAL: http2 exception (Http2Exception: First received frame
 * was not SETTINGS. Hex dump for first 5 bytes: a5a4a7a6a1) (sent 14 times)". It is a
 * {@link LockConfigurationException} of kind {@code INCOMPATIBLE_SERVER}.
 */
class EtcdWrongServiceTest {

    /** Long, so that failing at once shows. */
    private static final Duration OP_TIMEOUT = Duration.ofSeconds(10);
    /** Loading gRPC, Netty and Vert.x on a JVM's first call (about a second), plus slack for a loaded machine. */
    private static final Duration AT_ONCE = Duration.ofSeconds(4);

    @Test
    void aServerThatDoesNotSpeakEtcdIsNamedSoAtOnce() {
        ForeignServer.failures(ForeignServer.samples(), hostPort -> "etcd://" + hostPort, OP_TIMEOUT, AT_ONCE)
                .forEach((kind, f) -> {
                    assertTrue(f.message().contains("failed: the server at " + f.hostPort() + " does not speak etcd's "
                            + "protocol (gRPC over HTTP/2): "), kind + ": " + f.message());
                    assertTrue(f.message().contains("check the host and port in the uri"), f.message());
                    // no retry can help: the uri must change
                    assertEquals(Kind.INCOMPATIBLE_SERVER,
                            assertInstanceOf(LockConfigurationException.class, f.exception(), kind).kind(), kind);
                });
    }
}
