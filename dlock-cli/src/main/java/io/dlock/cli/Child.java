package io.dlock.cli;

import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A command run by {@code exec} or {@code elect}: standard input, output and error inherited, extra
 * environment variables, and a stop that gives every process of the command {@code SIGTERM}, then
 * {@code SIGKILL} to whatever is left once a grace period is over.
 */
final class Child {

    private final Process process;
    private final String label;
    /** Every descendant seen so far: one that outlives its parent must not escape the stop. */
    private final Map<Long, ProcessHandle> descendants = new LinkedHashMap<>();
    private boolean terminated; // guarded by this

    private Child(Process process, String label) {
        this.process = process;
        this.label = label;
    }

    /**
     * Starts a command.
     *
     * @param command the program and its arguments
     * @param env variables to add to this process's environment
     * @return the running command
     * @throws CliException with {@link ExitCodes#CANNOT_RUN} if it cannot be started
     */
    static Child start(List<String> command, Map<String, String> env) {
        ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
        pb.environment().putAll(env);
        try {
            return new Child(pb.start(), command.get(0));
        } catch (IOException e) {
            throw new CliException(ExitCodes.CANNOT_RUN, "cannot run '" + command.get(0) + "': " + e.getMessage(), e);
        }
    }

    /** @return the process id */
    long pid() {
        return process.pid();
    }

    /** @return the program's name, for messages */
    String label() {
        return label;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Waits for the command to exit.
     *
     * @param timeout the longest wait
     * @return true if it exited
     * @throws InterruptedException if interrupted
     */
    boolean waitFor(Duration timeout) throws InterruptedException {
        return process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** @return the exit status; valid once the command has exited */
    int exitValue() {
        return process.exitValue();
    }

    /** @return a future that completes when the command exits */
    java.util.concurrent.CompletableFuture<Process> onExit() {
        return process.onExit();
    }

    /** Sends {@code SIGTERM} to the command and each of its descendants, once. Returns at once. */
    synchronized void terminate() {
        if (terminated) {
            return;
        }
        terminated = true;
        remember();
        process.destroy();
        for (ProcessHandle d : descendants.values()) {
            d.destroy();
        }
    }

    /**
     * Stops the command: {@code SIGTERM} to it and its descendants (unless already sent), up to
     * {@code grace} for them to exit, then {@code SIGKILL} to whatever is left.
     *
     * @param grace how long the command gets to exit after {@code SIGTERM}
     * @return the command's exit status ({@code 128 + signal} if a signal ended it)
     */
    int stop(Duration grace) {
        boolean interrupted = false;
        terminate();
        long deadline = System.nanoTime() + grace.toNanos();
        try {
            while (true) {
                remember();
                boolean allGone = !process.isAlive() && !anyDescendantAlive();
                if (allGone) {
                    break;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    kill();
                    break;
                }
                try {
                    process.waitFor(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)), TimeUnit.NANOSECONDS);
                    if (!process.isAlive()) {
                        Thread.sleep(Math.min(TimeUnit.NANOSECONDS.toMillis(left), 20));
                    }
                } catch (InterruptedException e) {
                    interrupted = true; // a stop must finish: the lock is gone
                }
            }
            while (true) {
                try {
                    return process.waitFor();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Sends {@code SIGKILL} to the command and every descendant seen. */
    synchronized void kill() {
        remember();
        process.destroyForcibly();
        for (ProcessHandle d : descendants.values()) {
            d.destroyForcibly();
        }
    }

    private synchronized boolean anyDescendantAlive() {
        return descendants.values().stream().anyMatch(ProcessHandle::isAlive);
    }

    private synchronized void remember() {
        process.descendants().forEach(d -> descendants.putIfAbsent(d.pid(), d));
    }
}
