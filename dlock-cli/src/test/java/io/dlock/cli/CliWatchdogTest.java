package io.dlock.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A command run by {@code dlock exec} or {@code dlock elect} must not outlive its lease when the
 * dlock process itself is killed (SIGKILL, the OOM killer) or frozen (SIGSTOP, a very long GC
 * pause). Real processes (see {@link CliProcess}) against a real ZooKeeper server on a free
 * loopback port, with 5 s sessions and 5 s leases (the longest this server grants), so that the
 * bounds below can be generous for a loaded machine and still lie well inside a lease.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CliWatchdogTest {

    private static final Duration SESSION = Duration.ofSeconds(5);
    private static final Duration LEASE = Duration.ofSeconds(5);
    /** Generous bound for a CLI command that should finish promptly: a JVM start plus a few round trips. */
    private static final Duration PROMPT = Duration.ofSeconds(30);
    /**
     * How soon the command must be gone once dlock is killed. The watchdog sees the end of its pipe
     * the moment the kernel closes dlock's end and signals at once (a few milliseconds); half a
     * lease leaves a busy machine plenty of room and still ends the command long before anyone
     * else can get the lock (a lease, or here the 5 s session, after dlock's last renewal).
     */
    private static final Duration GONE_AFTER_KILL = LEASE.dividedBy(2);

    private EmbeddedZooKeeper zk;
    private String uri;
    /** Processes a test started that must not outlive it, whatever happened. */
    private final List<Long> strays = new ArrayList<>();

    @TempDir
    Path dir;

    @BeforeAll
    void startServer() {
        zk = EmbeddedZooKeeper.start(Duration.ofSeconds(30));
        uri = zk.uri(SESSION);
    }

    @AfterAll
    void stopServer() {
        if (zk != null) {
            zk.close();
        }
    }

    @AfterEach
    void killStrays() {
        for (long pid : strays) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
        strays.clear();
    }

    private static boolean await(BooleanSupplier condition, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() - deadline < 0) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(10);
        }
        return condition.getAsBoolean();
    }

    private static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "";
        }
    }

    /**
     * A shell that starts {@code sleep 60} in the background, writes "SHELL_PID SLEEP_PID" to a
     * file and waits: a command with a descendant, both of which must be stopped.
     */
    private static String sleeper(Path pids) {
        return "sleep 60 & echo \"$$ $!\" > " + pids + ".tmp; mv " + pids + ".tmp " + pids + "; wait";
    }

    /** Waits for the pids a {@link #sleeper} wrote, and remembers them for clean-up. */
    private long[] pids(Path file, CliProcess p) throws InterruptedException {
        assertTrue(await(() -> !read(file).isBlank(), PROMPT), "the command started\n" + p.describe());
        long[] pids = Arrays.stream(read(file).trim().split(" ")).mapToLong(Long::parseLong).toArray();
        for (long pid : pids) {
            strays.add(pid);
        }
        return pids;
    }

    private static boolean allGone(long[] pids) {
        return Arrays.stream(pids).allMatch(TestProcesses::ended);
    }

    @Test
    void execsCommandIsStoppedAtOnceWhenDlockIsKilledAndTheNextExecGetsTheLock() throws Exception {
        Path pidFile = dir.resolve("exec-pids.txt");
        try (CliProcess p = CliProcess.start(dir, "exec", "--uri", uri, "--name", "killed", "--lease", "5s", "--",
                "sh", "-c", sleeper(pidFile))) {
            long[] pids = pids(pidFile, p);
            long killedAt = System.nanoTime();
            p.signal("KILL"); // dlock alone, like the OOM killer: its command is not touched
            boolean stopped = await(() -> allGone(pids), GONE_AFTER_KILL);
            long took = System.nanoTime() - killedAt;
            assertTrue(stopped, "the command (shell and sleep " + Arrays.toString(pids) + ") is gone within "
                    + GONE_AFTER_KILL + " of dlock's death\n" + p.describe());
            System.out.println("[cli-watchdog-test] exec: command gone " + took / 1_000_000 + " ms after SIGKILL");

            // the lock ends on the server with the dead process's session; then the next exec gets it
            Path ran = dir.resolve("next.txt");
            CliProcess next = CliProcess.run(dir, PROMPT, "exec", "--uri", uri, "--name", "killed", "--lease", "5s",
                    "--wait", "20s", "--", "sh", "-c", "echo \"$DLOCK_FENCING_TOKEN\" > " + ran);
            assertEquals(0, next.exitCode(PROMPT), next.describe());
            assertTrue(!read(ran).isBlank(), "the next exec ran its command\n" + next.describe());
        }
    }

    @Test
    void aCommandThatIgnoresTermGetsKillAfterTheGraceWhenDlockIsKilled() throws Exception {
        Path pidFile = dir.resolve("stubborn-pids.txt");
        String script = "trap '' TERM; sleep 60 & echo \"$$ $!\" > " + pidFile + ".tmp; mv " + pidFile + ".tmp "
                + pidFile + "; while true; do sleep 0.1; done";
        try (CliProcess p = CliProcess.start(dir, "exec", "--uri", uri, "--name", "stubborn", "--lease", "5s",
                "--grace", "1s", "--", "sh", "-c", script)) {
            long[] pids = pids(pidFile, p);
            long killedAt = System.nanoTime();
            p.signal("KILL");
            // SIGTERM at once (ignored by the shell, inherited as ignored by its sleep), SIGKILL 1 s later;
            // the same room as above on top of that second, still well inside the lease
            Duration bound = GONE_AFTER_KILL.plusSeconds(1);
            boolean stopped = await(() -> allGone(pids), bound);
            long took = System.nanoTime() - killedAt;
            assertTrue(stopped, "the command (" + Arrays.toString(pids) + ") is gone within " + bound
                    + " of dlock's death\n" + p.describe());
            assertTrue(took >= Duration.ofMillis(900).toNanos(), "SIGTERM was ignored: only SIGKILL, 1 s later, "
                    + "ended it, yet it was gone after " + took / 1_000_000 + " ms");
            assertTrue(p.stderr().contains("dlock: watchdog: sending SIGKILL"), p.describe());
            System.out.println("[cli-watchdog-test] exec: command ignoring SIGTERM gone " + took / 1_000_000
                    + " ms after SIGKILL (grace 1 s)");
        }
    }

    @Test
    void execsCommandIsStoppedBeforeTheLeaseRunsOutWhenDlockIsFrozen() throws Exception {
        Path pidFile = dir.resolve("frozen-pids.txt");
        try (CliProcess p = CliProcess.start(dir, "exec", "--uri", uri, "--name", "frozen", "--lease", "5s",
                "--grace", "1s", "--", "sh", "-c", sleeper(pidFile))) {
            long[] pids = pids(pidFile, p);
            long frozenAt = System.nanoTime();
            p.signal("STOP"); // a GC pause that never ends: no more renewals, and no word to the command
            try {
                // dlock's last renewal request left before the freeze, so the lease's validity (lease time
                // minus the drift margin, 1% + 50 ms, after that request) ends at the latest 4.9 s after the
                // freeze, and earlier by however long before the freeze that renewal left. This test proves the
                // command is gone by the latest end; that it goes by the actual end, wherever the last renewal
                // fell, is ChildTest's, which drives the validity itself and bounds the kill on both sides
                Duration validity = LEASE.minus(Duration.ofMillis(100));
                boolean stopped = await(() -> allGone(pids), validity);
                long took = System.nanoTime() - frozenAt;
                assertTrue(stopped, "the command (" + Arrays.toString(pids) + ") is gone before the lease's validity "
                        + "ended (" + validity + " after the freeze at the latest)\n" + p.describe());
                System.out.println("[cli-watchdog-test] exec: command gone " + took / 1_000_000
                        + " ms after SIGSTOP (lease 5 s, grace 1 s)");
                assertTrue(p.stderr().contains("dlock: watchdog:"), "the watchdog says why\n" + p.describe());
            } finally {
                p.signal("CONT");
            }
        }
    }

    @Test
    void electsCommandIsStoppedAtOnceWhenDlockIsKilled() throws Exception {
        Path pidFile = dir.resolve("elect-pids.txt");
        try (CliProcess p = CliProcess.start(dir, "elect", "--uri", uri, "--name", "killed-leader", "--lease", "5s",
                "--", "sh", "-c", sleeper(pidFile))) {
            long[] pids = pids(pidFile, p);
            long killedAt = System.nanoTime();
            p.signal("KILL");
            boolean stopped = await(() -> allGone(pids), GONE_AFTER_KILL);
            long took = System.nanoTime() - killedAt;
            assertTrue(stopped, "the leader's command (" + Arrays.toString(pids) + ") is gone within "
                    + GONE_AFTER_KILL + " of dlock's death\n" + p.describe());
            System.out.println("[cli-watchdog-test] elect: command gone " + took / 1_000_000 + " ms after SIGKILL");
        }
    }

    @Test
    void execsCommandReadsDlocksStandardInput() throws Exception {
        Path input = dir.resolve("input.txt");
        Files.writeString(input, "line one\nline two\n", StandardCharsets.UTF_8);
        Path copy = dir.resolve("copy.txt");
        try (CliProcess p = CliProcess.start(dir, input, Map.of(), "exec", "--uri", uri, "--name", "stdin",
                "--lease", "5s", "--", "sh", "-c", "cat > " + copy)) {
            assertEquals(0, p.exitCode(PROMPT), p.describe());
            assertEquals("line one\nline two\n", read(copy), p.describe());
        }
    }
}
