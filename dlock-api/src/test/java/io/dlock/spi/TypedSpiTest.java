package io.dlock.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockBackendException;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** The SPI's value types: their checks and the validity rule of a grant. */
class TypedSpiTest {

    @Test
    void aGrantNeedsAPositiveTokenAndItsValidityStartsAtTheEarlierOfSendAndLeaseStart() {
        assertEquals("fencingToken must be positive, was 0",
                assertThrows(IllegalArgumentException.class, () -> AttemptResult.granted(0, "s")).getMessage());
        assertThrows(IllegalArgumentException.class, () -> AttemptResult.granted(-1, null, 5));
        assertThrows(IllegalArgumentException.class, () -> new AttemptResult.Granted<>(1, null, null));

        AttemptResult.Granted<String> plain = AttemptResult.granted(7, "s");
        assertEquals(1_000, plain.validFrom(1_000));
        assertEquals(OptionalLong.empty(), plain.leaseStartNanos());
        assertEquals(400, AttemptResult.granted(7, "s", 400).validFrom(1_000), "a lease that started earlier");
        assertEquals(1_000, AttemptResult.granted(7, "s", 2_000).validFrom(1_000), "never later than the send");
        // ticker readings may wrap: compared by difference
        assertEquals(Long.MAX_VALUE, AttemptResult.granted(7, "s", Long.MAX_VALUE).validFrom(Long.MIN_VALUE + 5));
    }

    @Test
    void busyCarriesAnOptionalNonNegativeHint() {
        assertEquals(Optional.empty(), AttemptResult.busy().retryAfter());
        assertEquals(Optional.empty(), AttemptResult.busy(null).retryAfter());
        assertEquals(Optional.of(Duration.ofSeconds(2)), AttemptResult.busy(Duration.ofSeconds(2)).retryAfter());
        assertThrows(IllegalArgumentException.class, () -> AttemptResult.busy(Duration.ofSeconds(-1)));
        assertThrows(IllegalArgumentException.class, () -> new AttemptResult.Busy<>(null));
    }

    @Test
    void aGrantIsMadeFromTheRequestAndTheAnswerAndChecksItsParts() {
        AcquireRequest request = new AcquireRequest("orders", "0123456789abcdef0123456789abcdef", Duration.ofSeconds(30));
        Grant<Integer> grant = Grant.of(request, AttemptResult.granted(42, 9));
        assertEquals(new Grant<>("orders", request.ownerId(), 42, Duration.ofSeconds(30), 9), grant);
        assertTrue(grant.toString().contains("token=42"));
        assertTrue(!grant.toString().contains(request.ownerId()), "the owner id is shown shortened: " + grant);
        assertEquals("name must not be null", assertThrows(IllegalArgumentException.class,
                () -> new Grant<>(null, "o", 1, Duration.ofSeconds(1), null)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> new Grant<>("n", null, 1, Duration.ofSeconds(1), null));
        assertThrows(IllegalArgumentException.class, () -> new Grant<>("n", "o", 0, Duration.ofSeconds(1), null));
        assertThrows(IllegalArgumentException.class, () -> new Grant<>("n", "o", 1, Duration.ZERO, null));
        assertThrows(IllegalArgumentException.class, () -> Grant.of(null, AttemptResult.granted(1, null)));
        assertThrows(IllegalArgumentException.class, () -> Grant.of(request, null));
    }

    @Test
    void renewOutcomesAreThreeKindsAndAnUnknownOneCarriesItsCause() {
        assertSame(RenewOutcome.renewed(), RenewOutcome.renewed());
        assertTrue(RenewOutcome.renewed() instanceof RenewOutcome.Renewed);
        assertTrue(RenewOutcome.notHeld() instanceof RenewOutcome.NotHeld);
        LockBackendException cause = new LockBackendException("no answer", "orders", null);
        RenewOutcome unknown = RenewOutcome.unknown(cause);
        assertTrue(unknown instanceof RenewOutcome.Unknown u && u.cause() == cause);
        assertEquals("cause must not be null",
                assertThrows(IllegalArgumentException.class, () -> RenewOutcome.unknown(null)).getMessage());
    }
}
