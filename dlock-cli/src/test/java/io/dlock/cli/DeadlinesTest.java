package io.dlock.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The watchdog's deadlines, on made-up clock readings (milliseconds, as nanoseconds). */
class DeadlinesTest {

    private static long ms(long millis) {
        return millis * 1_000_000L;
    }

    private static Duration d(long millis) {
        return Duration.ofMillis(millis);
    }

    @Test
    void killWhenTheValidityEndsAndTermAGraceBeforeWhenTheGraceFits() {
        // 5 s lease renewed every 1.667 s, 1 s grace: the grace fits after two renew intervals
        Deadlines d = new Deadlines(d(1667), d(1000));
        assertTrue(d.observe(ms(1000), d(4900)));
        assertEquals(ms(5900), d.killAt());
        assertEquals(ms(4900), d.termAt());
    }

    @Test
    void termNoEarlierThanTwoRenewIntervalsAfterTheLastRenewal() {
        // the defaults: 15 s lease renewed every 5 s, 10 s grace: only 4.8 s of the grace fit
        Deadlines d = new Deadlines(d(5000), d(10_000));
        d.observe(0, d(14_800));
        assertEquals(ms(14_800), d.killAt());
        assertEquals(ms(10_000), d.termAt());
    }

    @Test
    void termNeverAfterKill() {
        // a lease read with little left: both at the end of the validity
        Deadlines d = new Deadlines(d(5000), d(1000));
        d.observe(0, d(300));
        assertEquals(ms(300), d.killAt());
        assertEquals(ms(300), d.termAt());
    }

    @Test
    void aRenewalMovesBothDeadlines() {
        Deadlines d = new Deadlines(d(1000), d(500));
        d.observe(0, d(2900));
        assertEquals(ms(2400), d.termAt());
        assertFalse(d.observe(ms(400), d(2500)), "the same end, read later");
        assertFalse(d.observe(ms(401), d(2499).plusNanos(500_000)), "a reading that jitters by less than 1 ms");
        assertTrue(d.observe(ms(1000), d(2900)), "renewed: the end moves by a second");
        assertEquals(ms(3900), d.killAt());
        assertEquals(ms(3400), d.termAt());
    }

    @Test
    void aZeroReadingKeepsTheLastValidityEnd() {
        Deadlines d = new Deadlines(d(1000), d(500));
        d.observe(0, d(2900));
        assertFalse(d.observe(ms(100), Duration.ZERO), "lost or released: nothing new about the end");
        assertEquals(ms(2900), d.killAt());
    }

    @Test
    void aLeaseNeverSeenValidGivesNoTimeAtAll() {
        Deadlines d = new Deadlines(d(1000), d(500));
        assertTrue(d.observe(ms(70), Duration.ZERO));
        assertEquals(ms(70), d.killAt());
        assertEquals(ms(70), d.termAt());
    }

    @Test
    void aStopSendsTermAtOnceAndKillAfterTheGraceOrAtTheValidityEnd() {
        Deadlines d = new Deadlines(d(5000), d(2000));
        d.observe(0, d(14_800));
        assertTrue(d.stop(ms(1000)));
        assertFalse(d.stop(ms(1500)), "a second stop changes nothing");
        assertTrue(d.stopping());
        assertEquals(ms(1000), d.termAt());
        assertEquals(ms(3000), d.killAt());
        // renewals go on while the command stops: the grace still counts from the stop
        d.observe(ms(5000), d(14_800));
        assertEquals(ms(1000), d.termAt());
        assertEquals(ms(3000), d.killAt());

        Deadlines late = new Deadlines(d(5000), d(10_000));
        late.observe(0, d(14_800));
        late.stop(ms(14_000)); // the lease is lost at 14 s: the validity ends before the grace
        assertEquals(ms(14_000), late.termAt());
        assertEquals(ms(14_800), late.killAt());
    }

    @Test
    void badArgumentsNameTheParameter() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Deadlines(Duration.ZERO, d(1)));
        assertTrue(e.getMessage().startsWith("renewInterval"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new Deadlines(d(1), d(-1)));
        assertTrue(e.getMessage().startsWith("grace"), e.getMessage());
    }

    @Test
    void hugeDurationsDoNotOverflow() {
        Deadlines d = new Deadlines(Duration.ofDays(365L * 1000), Duration.ofDays(365L * 1000));
        d.observe(0, Duration.ofDays(365L * 1000));
        assertTrue(d.killAt() > 0 && d.termAt() > 0 && d.termAt() <= d.killAt());
    }
}
