package io.dlock.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Child} and its watchdog with real processes, in this JVM, under a made-up lease: one whose
 * validity a test sets, so that a lease that stops being renewed (what the watchdog sees when dlock
 * freezes) needs no frozen process. Bounds are generous and explained where they appear.
 */
class ChildTest {

    /** Generous bound for what should take milliseconds: process starts on a busy machine. */
    private static final Duration PROMPT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    /** A lease renewed every {@code interval}, each renewal good for {@code validity}, until {@link #stop()}. */
    private static final class FakeLease implements Supplier<Duration> {
        private final long start = System.nanoTime();
        private final long interval;
        private final long validity;
        private volatile long lastRenewal = start;
        private volatile boolean renewing = true;

        FakeLease(Duration interval, Duration validity) {
            this.interval = interval.toNanos();
            this.validity = validity.toNanos();
        }

        @Override
        public Duration get() {
            long now = System.nanoTime();
            if (renewing) {
                lastRenewal = start + (now - start) / interval * interval;
            }
            long left = lastRenewal + validity - now;
            return left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
        }

        /** Renews no more, as a frozen or cut-off dlock; returns when the validity ends (System.nanoTime). */
        long stop() {
            renewing = false;
            return lastRenewal + validity;
        }
    }

    private static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p, StandardCharsets.UTF_8).trim() : "";
        } catch (IOException e) {
            return "";
        }
    }

    private static Child start(String script, Supplier<Duration> lease, Duration interval, Duration grace) {
        return Child.start(List.of("sh", "-c", script), Map.of("DLOCK_TEST", "set"), lease, interval, grace);
    }

    @Test
    void theCommandRunsWithTheEnvironmentWhileTheLeaseIsRenewedAndExitsWithItsStatus() throws Exception {
        Path out = dir.resolve("env.txt");
        FakeLease lease = new FakeLease(Duration.ofMillis(200), Duration.ofMillis(600));
        // runs for five times the validity of one renewal: the renewals keep it running
        Child c = start("echo \"$DLOCK_TEST\" > " + out + "; sleep 3; exit 7", lease, Duration.ofMillis(200),
                Duration.ofMillis(100));
        assertTrue(c.waitFor(PROMPT), "the command exited");
        assertEquals(7, c.exitValue());
        assertEquals("set", read(out));
    }

    @Test
    void aLeaseThatIsNoLongerRenewedStopsTheCommandByTheEndOfItsValidity() throws Exception {
        Path term = dir.resolve("term.txt");
        Path pid = dir.resolve("pid.txt");
        FakeLease lease = new FakeLease(Duration.ofMillis(200), Duration.ofMillis(1500));
        // the command ignores SIGTERM (noting it), so only the SIGKILL at the end of the validity ends it
        Child c = start("trap 'echo TERM > " + term + "' TERM; echo $$ > " + pid
                + "; while true; do sleep 0.05; done", lease, Duration.ofMillis(200), Duration.ofMillis(500));
        long deadline = System.nanoTime() + PROMPT.toNanos();
        while (read(pid).isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertFalse(read(pid).isEmpty(), "the command started");
        long validUntil = lease.stop();
        assertTrue(c.waitFor(PROMPT), "the command was stopped");
        long exitedAt = System.nanoTime();
        assertEquals(137, c.exitValue(), "SIGKILL ended it (128 + 9)");
        assertEquals("TERM", read(term), "SIGTERM came first, a grace period before the validity's end");
        // SIGKILL is due when the validity ends; the watchdog's timers, its read of the pipe and the
        // exit take milliseconds, and a busy machine can add a little: a second is plenty
        assertTrue(exitedAt - validUntil < Duration.ofSeconds(1).toNanos(), "killed "
                + (exitedAt - validUntil) / 1_000_000 + " ms after the validity ended");
        // and not at SIGTERM: the command ignored it, so only the SIGKILL due at the validity's end ended it.
        // SIGTERM came 500 ms (the grace) before that; the watchdog learns the deadline from readings taken
        // every 50 ms and counts in whole milliseconds, so 250 ms of slack still tells the two apart
        assertTrue(exitedAt - validUntil > -Duration.ofMillis(250).toNanos(), "killed "
                + (validUntil - exitedAt) / 1_000_000 + " ms before the validity ended");
    }

    @Test
    void stopSendsTermToTheWholeProcessGroupAndWaitsForIt() throws Exception {
        Path pids = dir.resolve("pids.txt");
        FakeLease lease = new FakeLease(Duration.ofMillis(200), Duration.ofMillis(600));
        Child c = start("sleep 60 & echo \"$$ $!\" > " + pids + ".tmp; mv " + pids + ".tmp " + pids + "; wait", lease,
                Duration.ofMillis(200), Duration.ofSeconds(10));
        long deadline = System.nanoTime() + PROMPT.toNanos();
        while (read(pids).isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertFalse(read(pids).isEmpty(), "the command started");
        long[] both = Stream.of(read(pids).split(" ")).mapToLong(Long::parseLong).toArray();
        assertEquals(143, c.stop(), "SIGTERM ended the shell (128 + 15)");
        assertFalse(c.isAlive());
        for (long p : both) {
            assertTrue(TestProcesses.ended(p), "process " + p + " of the command's group is gone once stop() returns");
        }
    }

    @Test
    void aCommandThatCannotBeFoundIsReportedBeforeAnythingStarts() {
        CliException e = assertThrows(CliException.class, () -> Child.start(List.of("/no/such/program"), Map.of(),
                () -> Duration.ofSeconds(1), Duration.ofMillis(300), Duration.ofSeconds(1)));
        assertEquals(ExitCodes.CANNOT_RUN, e.exitCode());
        assertTrue(e.getMessage().startsWith("cannot run '/no/such/program'"), e.getMessage());
        e = assertThrows(CliException.class, () -> Child.start(List.of("no-such-program-of-dlock"), Map.of(),
                () -> Duration.ofSeconds(1), Duration.ofMillis(300), Duration.ofSeconds(1)));
        assertTrue(e.getMessage().contains("not found on the PATH"), e.getMessage());
    }
}
