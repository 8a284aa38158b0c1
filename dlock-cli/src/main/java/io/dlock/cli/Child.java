package io.dlock.cli;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A command run by {@code exec} or {@code elect} under a lease, through a watchdog outside the JVM
 * ({@code watchdog.sh}, run by {@code /bin/sh} in a session of its own) so that the command never
 * outlives the lease, not even when this JVM is killed or frozen.
 *
 * <p>The watchdog starts the command in a session and process group of its own, with this
 * process's standard input, output and error and the extra environment variables. This JVM holds
 * the only writing end of a named pipe that the watchdog reads, in a private temporary directory,
 * and tells it over that pipe when to send {@code SIGTERM} and {@code SIGKILL} to the command's
 * process group if it hears nothing newer ({@link Deadlines}): one line when the command starts,
 * one whenever a renewal moves the lease's validity, one when a stop is asked for. If this JVM
 * dies, the kernel closes its end and the watchdog stops the command at once; if it freezes, the
 * last deadlines pass and the watchdog stops the command before the lease's validity ends.
 *
 * <p>A daemon thread per command ({@code dlock-watchdog-feed}) polls the lease's validity every
 * 50 ms (a tenth of the renew interval for short ones) and writes the lines; nothing else writes,
 * so {@link #terminate()} never blocks. The watchdog exits with the command's status, once the
 * command has exited and, if it was stopped, once nothing of its process group is left: so
 * {@link #waitFor} and {@link #stop()} return only when the lock can be let go.
 */
final class Child {

    private static final String SCRIPT = loadScript();
    private static final long MAX_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final Process watchdog;
    private final String label;
    private final Path dir;
    private final FileChannel beats; // the only writing end of the watchdog's pipe
    private final Supplier<Duration> remaining;
    private final Deadlines deadlines; // guarded by this
    private final long pollNanos;
    private final Duration grace;
    private long sentTerm; // guarded by this; the deadlines last sent
    private long sentKill; // guarded by this
    private boolean sentStop; // guarded by this
    private boolean sentAny; // guarded by this
    private boolean sendNow; // guarded by this: a stop was asked for and is not sent yet

    private Child(Process watchdog, String label, Path dir, FileChannel beats, Supplier<Duration> remaining,
                  Deadlines deadlines, Duration renewInterval, Duration grace) {
        this.grace = grace;
        this.watchdog = watchdog;
        this.label = label;
        this.dir = dir;
        this.beats = beats;
        this.remaining = remaining;
        this.deadlines = deadlines;
        this.pollNanos = Math.max(1_000_000L, Math.min(MAX_POLL_NANOS, renewInterval.toNanos() / 10));
    }

    /**
     * Starts a command under a lease.
     *
     * @param command the program and its arguments
     * @param env variables to add to this process's environment
     * @param remaining the lease's remaining validity ({@code Lease::remaining}); zero once lost or released
     * @param renewInterval how often the lease is renewed
     * @param grace how long the command gets between {@code SIGTERM} and {@code SIGKILL}
     * @return the running command
     * @throws CliException with {@link ExitCodes#CANNOT_RUN} if the command, {@code setsid} or
     *     {@code mkfifo} cannot be found, or the watchdog cannot be started
     */
    static Child start(List<String> command, Map<String, String> env, Supplier<Duration> remaining,
                       Duration renewInterval, Duration grace) {
        String program = command.get(0);
        String path = System.getenv("PATH");
        String problem = Executables.problem(program, path);
        if (problem != null) {
            throw new CliException(ExitCodes.CANNOT_RUN, "cannot run '" + program + "': " + problem);
        }
        Optional<Path> setsid = Executables.find("setsid", path);
        if (setsid.isEmpty()) {
            throw new CliException(ExitCodes.CANNOT_RUN, "cannot run '" + program + "': setsid is not on the PATH; "
                    + "exec and elect need it (util-linux or BusyBox) to give the command a process group of its own");
        }
        Deadlines deadlines = new Deadlines(renewInterval, grace);
        Path dir = null;
        FileChannel beats = null;
        try {
            dir = Files.createTempDirectory("dlock-watchdog-"); // rwx------
            Path fifo = dir.resolve("beats");
            makeFifo(fifo);
            // read-write: the open does not wait for a reader; this JVM never reads
            beats = FileChannel.open(fifo, StandardOpenOption.READ, StandardOpenOption.WRITE);
            List<String> argv = new ArrayList<>(List.of(setsid.get().toString(), "/bin/sh", "-c", SCRIPT,
                    "dlock-watchdog", fifo.toString(), Long.toString(graceMillis(grace))));
            argv.addAll(command);
            ProcessBuilder pb = new ProcessBuilder(argv).inheritIO();
            pb.environment().putAll(env);
            Process watchdog = pb.start();
            Child child = new Child(watchdog, program, dir, beats, remaining, deadlines, renewInterval, grace);
            child.feedOnce(); // the watchdog starts the command once it has its first deadlines
            Thread feeder = new Thread(child::feed, "dlock-watchdog-feed-" + watchdog.pid());
            feeder.setDaemon(true);
            feeder.start();
            return child;
        } catch (IOException | UncheckedIOException e) {
            closeQuietly(beats);
            deleteQuietly(dir);
            throw new CliException(ExitCodes.CANNOT_RUN, "cannot run '" + program + "': " + e.getMessage(), e);
        }
    }

    private static void makeFifo(Path fifo) throws IOException {
        Optional<Path> mkfifo = Executables.find("mkfifo", System.getenv("PATH"));
        if (mkfifo.isEmpty()) {
            throw new IOException("mkfifo is not on the PATH");
        }
        Process p = new ProcessBuilder(mkfifo.get().toString(), fifo.toString()).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (!p.waitFor(10, TimeUnit.SECONDS)) {
                        p.destroyForcibly();
                        throw new IOException("mkfifo did not finish within 10 s");
                    }
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // a pipe is made in milliseconds: finish it
                }
            }
            if (p.exitValue() != 0) {
                String out;
                try (InputStream in = p.getInputStream()) {
                    out = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
                }
                throw new IOException("mkfifo failed: " + out);
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** @return the program's name, for messages */
    String label() {
        return label;
    }

    /** @return whether the watchdog (and so the command, or what is left of a stopped one) still runs */
    boolean isAlive() {
        return watchdog.isAlive();
    }

    /**
     * Waits for the command to exit (and, if it was stopped, for its whole process group).
     *
     * @param timeout the longest wait
     * @return true if it exited
     * @throws InterruptedException if interrupted
     */
    boolean waitFor(Duration timeout) throws InterruptedException {
        return watchdog.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** @return the command's exit status ({@code 128 + N} if signal N ended it); valid once it has exited */
    int exitValue() {
        return watchdog.exitValue();
    }

    /** @return a future that completes when the command has exited (see {@link #waitFor}) */
    CompletableFuture<Process> onExit() {
        return watchdog.onExit();
    }

    /**
     * Asks for the command to be stopped: {@code SIGTERM} to its process group at once, and
     * {@code SIGKILL} after the grace period or when the lease's validity ends, whichever comes
     * first. Returns at once; later calls change nothing.
     */
    void terminate() {
        synchronized (this) {
            if (deadlines.stop(System.nanoTime())) {
                sendNow = true;
                notifyAll();
            }
        }
    }

    /**
     * Stops the command ({@link #terminate()}) and waits until it and its process group are gone.
     *
     * @return the command's exit status ({@code 128 + signal} if a signal ended it)
     */
    int stop() {
        terminate();
        // the watchdog sends SIGKILL within the grace and then exits; if it does not (someone stopped or
        // killed it), this JVM kills what it can see of the command itself rather than wait for ever
        long deadline = System.nanoTime() + Math.min(grace.toNanos(), TimeUnit.DAYS.toNanos(1)) + STOP_MARGIN_NANOS;
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    long left = deadline - System.nanoTime();
                    if (watchdog.waitFor(Math.max(0, left), TimeUnit.NANOSECONDS)) {
                        return watchdog.exitValue();
                    }
                    System.err.println("dlock: the watchdog of '" + label + "' did not stop the command in time; "
                            + "killing it and what it started");
                    watchdog.descendants().forEach(ProcessHandle::destroyForcibly);
                    watchdog.destroyForcibly();
                    watchdog.waitFor(STOP_MARGIN_NANOS, TimeUnit.NANOSECONDS);
                    return 128 + 9;
                } catch (InterruptedException e) {
                    interrupted = true; // a stop must finish: the lock is gone or about to be let go
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** How long a stop waits beyond the grace for the watchdog's own SIGKILL before it kills from here. */
    private static final long STOP_MARGIN_NANOS = TimeUnit.SECONDS.toNanos(2);

    // ------------------------------------------------------------------ feeding the watchdog

    private void feed() {
        try {
            while (watchdog.isAlive()) {
                feedOnce();
                synchronized (this) {
                    if (!sendNow) {
                        TimeUnit.NANOSECONDS.timedWait(this, pollNanos);
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // nobody interrupts this thread; end it if someone does
        } catch (IOException | RuntimeException e) {
            // the watchdog is gone (it exits only with the command) or the pipe broke: it then acts as if this JVM died
            if (watchdog.isAlive()) {
                System.err.println("dlock: lost touch with the watchdog of '" + label + "': " + e);
            }
        } finally {
            try {
                watchdog.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            closeQuietly(beats); // after the watchdog: closing it earlier would read as this JVM's death
            deleteQuietly(dir);
        }
    }

    /** Reads the lease and tells the watchdog if its deadlines moved. Only the feeder (and start) call it. */
    private void feedOnce() throws IOException {
        long now = System.nanoTime(); // before the lease: now + remaining never passes the real end
        Duration left = remaining.get();
        String line = null;
        synchronized (this) {
            sendNow = false;
            deadlines.observe(now, left);
            long term = deadlines.termAt();
            long kill = deadlines.killAt();
            if (!sentAny || term != sentTerm || kill != sentKill || deadlines.stopping() != sentStop) {
                sentTerm = term;
                sentKill = kill;
                sentStop = deadlines.stopping();
                sentAny = true;
                long sentAt = System.nanoTime();
                line = "b " + millisUntil(term, sentAt) + " " + millisUntil(kill, sentAt) + "\n";
            }
        }
        if (line != null) {
            ByteBuffer buf = ByteBuffer.wrap(line.getBytes(StandardCharsets.US_ASCII));
            while (buf.hasRemaining()) {
                beats.write(buf); // a few bytes into a pipe the watchdog drains: never blocks for long
            }
        }
    }

    /** The grace period in milliseconds, capped at a century (the watchdog's shell counts in 64-bit integers). */
    private static long graceMillis(Duration grace) {
        Duration century = Duration.ofDays(36_525);
        return (grace.compareTo(century) > 0 ? century : grace).toMillis();
    }

    /** Whole milliseconds from {@code now} to {@code at}, rounded down (a deadline a little early is safe), at least 0. */
    private static long millisUntil(long at, long now) {
        return Math.max(0, TimeUnit.NANOSECONDS.toMillis(at - now));
    }

    // ------------------------------------------------------------------ helpers

    private static String loadScript() {
        try (InputStream in = Child.class.getResourceAsStream("watchdog.sh")) {
            if (in == null) {
                throw new IllegalStateException("watchdog.sh is missing from dlock's jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read watchdog.sh from dlock's jar", e);
        }
    }

    private static void closeQuietly(FileChannel c) {
        if (c != null) {
            try {
                c.close();
            } catch (IOException e) {
                // nothing to do: the process ends soon, and with it the descriptor
            }
        }
    }

    /** Deletes the private directory (the watchdog removes it itself when it exits normally). */
    private static void deleteQuietly(Path dir) {
        if (dir == null) {
            return;
        }
        try {
            Files.deleteIfExists(dir.resolve("beats"));
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // a leftover empty directory or pipe in the temporary directory: harmless
        }
    }
}
