package io.dlock.tck;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.tck.mem.MemLockProvider;
import io.dlock.tck.mem.MemServer;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A provider's calls through {@link LinkedClients}: frozen, then answers lost, then healed. */
class LinkedClientsTest {

    @Test
    void freezesAndLosesAnswersOfAnyProvidersCalls() throws Exception {
        String server = "linked-" + System.nanoTime();
        LockClientConfig config = LockClientConfig.builder("mem://" + server).operationTimeout(Duration.ofMillis(300)).build();
        try (FreezableClient linked = LinkedClients.open(config, new MemLockProvider());
             LockClient other = LockClient.open("mem://" + server)) {
            LockClient c = linked.client();
            c.lock("a").tryAcquire().orElseThrow().release();

            linked.freeze();
            long t0 = System.nanoTime();
            assertThrows(LockBackendException.class, () -> c.lock("a").tryAcquire(Duration.ofSeconds(5)));
            // generous: one call of 300 ms, the abandon's, and scheduling
            assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(3).toNanos(), "a frozen call fails in time");
            linked.unfreeze();

            linked.inject(NetworkFault.DROP_ANSWERS);
            assertThrows(LockBackendException.class, () -> c.lock("b").tryAcquire());
            // the request was applied: the server granted "b" while the client heard nothing, and the abandon
            // (its answer lost too) was applied after it, owner-checked
            linked.heal();
            Optional<Lease> b = other.lock("b").tryAcquire(Duration.ofSeconds(2));
            assertTrue(b.isPresent(), "the grant whose answer was lost was abandoned on the server");
            b.get().release();
            assertTrue(MemServer.named(server).size() == 0, "nothing held");
        } finally {
            MemServer.drop(server);
        }
    }
}
