package io.dlock.tck;

import io.dlock.spi.support.Arguments;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What every fixture that runs a server as a child process needs: a free loopback port, signals
 * for {@link ServerControl#pause()} and {@link ServerControl#resume()}, a kill that waits for the
 * process to be gone, and removal of its data directory. Stateless and thread-safe.
 */
public final class ServerProcesses {

    private ServerProcesses() { }

    /**
     * Returns a loopback port that was free a moment ago (callers retry if it was taken since).
     *
     * @return the port
     * @throws UncheckedIOException if no port could be bound
     */
    public static int freeLoopbackPort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Sends a signal with the shell's built-in {@code kill} (present wherever {@code /bin/sh} is).
     *
     * @param process the process
     * @param signal the signal name without {@code SIG}: {@code STOP}, {@code CONT}, ...
     * @throws IllegalStateException if the signal could not be sent, or on interrupt (flag kept)
     */
    public static void signal(Process process, String signal) {
        Arguments.notNull("process", process);
        Arguments.notNull("signal", signal);
        try {
            Process kill = new ProcessBuilder("sh", "-c", "kill -" + signal + " " + process.pid())
                    .redirectErrorStream(true).start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sending " + signal + " to " + process.pid(), e);
        }
    }

    /**
     * Kills a process with SIGKILL (which also ends a stopped one) and waits until it is gone.
     *
     * @param process the process
     * @param label what it is, for messages
     * @throws IllegalStateException if it survives 10 s, or on interrupt (flag kept)
     */
    public static void killAndWait(Process process, String label) {
        Arguments.notNull("process", process);
        Arguments.notNull("label", label);
        process.destroyForcibly();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException(label + " " + process.pid() + " survived SIGKILL for 10 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while killing " + label, e);
        }
    }

    /**
     * Deletes a directory and everything in it, best effort: a temporary directory left behind is
     * harmless.
     *
     * @param dir the directory
     */
    public static void deleteTree(Path dir) {
        Arguments.notNull("dir", dir);
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // best effort
        }
    }
}
