package io.dlock.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ChecksAndIdsTest {

    @Test
    void checksNameTheParameterAndTheValue() {
        assertEquals("x must not be null",
                assertThrows(IllegalArgumentException.class, () -> Checks.notNull("x", null)).getMessage());
        assertEquals("leaseTime must be positive, was PT0S",
                assertThrows(IllegalArgumentException.class, () -> Checks.positive("leaseTime", Duration.ZERO)).getMessage());
        assertEquals("maxWait must not be negative, was PT-1S",
                assertThrows(IllegalArgumentException.class,
                        () -> Checks.nonNegative("maxWait", Duration.ofSeconds(-1))).getMessage());
        assertEquals(Duration.ZERO, Checks.nonNegative("maxWait", Duration.ZERO));
    }

    @Test
    void saturatedNanosNeverOverflows() {
        assertEquals(Long.MAX_VALUE, Checks.saturatedNanos(ChronoUnit.FOREVER.getDuration()));
        assertEquals(Long.MIN_VALUE, Checks.saturatedNanos(ChronoUnit.FOREVER.getDuration().negated()));
        assertEquals(1_500_000_000L, Checks.saturatedNanos(Duration.ofMillis(1500)));
    }

    @Test
    void ownerIdsAre128RandomBitsInHex() {
        Set<String> ids = new HashSet<>();
        int[] bitCounts = new int[128];
        int n = 2000;
        for (int i = 0; i < n; i++) {
            String id = io.dlock.spi.support.Ids.ownerId();
            assertTrue(id.matches("[0-9a-f]{32}"), id);
            ids.add(id);
            for (int b = 0; b < 128; b++) {
                int nibble = Character.digit(id.charAt(b / 4), 16);
                if ((nibble >> (3 - b % 4) & 1) == 1) {
                    bitCounts[b]++;
                }
            }
        }
        assertEquals(n, ids.size());
        for (int b = 0; b < 128; b++) {
            assertTrue(bitCounts[b] > n / 3 && bitCounts[b] < 2 * n / 3, "bit " + b + " is not random: " + bitCounts[b]);
        }
    }
}
