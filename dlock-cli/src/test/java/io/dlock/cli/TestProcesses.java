package io.dlock.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** What the tests need to know about processes they did not start themselves. */
final class TestProcesses {

    private TestProcesses() { }

    /**
     * Tells whether a process has ended. A zombie has ended too: it runs no code and only waits to
     * be reaped, which for an orphan is init's job, and the init of the machine these tests were
     * written on reaps only every second or two ({@link ProcessHandle#isAlive()} is true for a zombie).
     *
     * @param pid the process id
     * @return true if no process has that id, or it is a zombie
     */
    static boolean ended(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"), StandardCharsets.US_ASCII);
            return stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
        } catch (IOException e) {
            Optional<ProcessHandle> h = ProcessHandle.of(pid);
            return h.isEmpty() || !h.get().isAlive();
        }
    }
}
