package io.dlock.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The real {@code dlock} command in a child JVM ({@code java -cp <test class path> io.dlock.cli.Main
 * ...}), with its standard output and error in files, as a user would run it.
 */
final class CliProcess implements AutoCloseable {

    private final Process process;
    private final Path stdout;
    private final Path stderr;
    private final List<String> args;

    private CliProcess(Process process, Path stdout, Path stderr, List<String> args) {
        this.process = process;
        this.stdout = stdout;
        this.stderr = stderr;
        this.args = args;
    }

    /**
     * Starts {@code dlock ARGS...}.
     *
     * @param dir where the output files go (and the working directory)
     * @param env extra environment variables; a null value removes the variable
     * @param args the arguments
     * @return the running command
     */
    static CliProcess start(Path dir, Map<String, String> env, String... args) {
        return start(dir, null, env, args);
    }

    /**
     * Starts {@code dlock ARGS...} with its standard input read from a file.
     *
     * @param dir where the output files go (and the working directory)
     * @param input the file standard input reads, or null for {@code /dev/null}
     * @param env extra environment variables; a null value removes the variable
     * @param args the arguments
     * @return the running command
     */
    static CliProcess start(Path dir, Path input, Map<String, String> env, String... args) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cmd = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m",
                "-cp", classpath, "io.dlock.cli.Main"));
        cmd.addAll(List.of(args));
        try {
            Path out = Files.createTempFile(dir, "stdout-", ".txt");
            Path err = Files.createTempFile(dir, "stderr-", ".txt");
            ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile())
                    .redirectOutput(out.toFile()).redirectError(err.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(
                            input == null ? new java.io.File("/dev/null") : input.toFile()));
            pb.environment().remove("DLOCK_URI");
            env.forEach((k, v) -> {
                if (v == null) {
                    pb.environment().remove(k);
                } else {
                    pb.environment().put(k, v);
                }
            });
            return new CliProcess(pb.start(), out, err, List.of(args));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts {@code dlock ARGS...} with the test's environment. */
    static CliProcess start(Path dir, String... args) {
        return start(dir, Map.of(), args);
    }

    /**
     * Runs {@code dlock ARGS...} to the end.
     *
     * @param dir where the output files go
     * @param timeout the longest it may take
     * @param args the arguments
     * @return the finished command
     */
    static CliProcess run(Path dir, Duration timeout, String... args) throws InterruptedException {
        CliProcess p = start(dir, args);
        p.exitCode(timeout);
        return p;
    }

    /**
     * Waits for the exit status.
     *
     * @param timeout the longest wait; the process is killed and the test fails after it
     * @return the exit status
     */
    int exitCode(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            kill();
            throw new AssertionError("dlock " + args + " did not finish within " + timeout + "\nstdout:\n" + stdout()
                    + "\nstderr:\n" + stderr());
        }
        return process.exitValue();
    }

    Process process() {
        return process;
    }

    String stdout() {
        return read(stdout);
    }

    String stderr() {
        return read(stderr);
    }

    /** @return both outputs, for failure messages */
    String describe() {
        return "dlock " + args + "\n--- stdout:\n" + stdout() + "--- stderr:\n" + stderr();
    }

    /**
     * Sends a signal to the dlock process alone (not to its children), as {@code kill -NAME PID}.
     *
     * @param name the signal's name: {@code KILL}, {@code STOP}, {@code CONT}...
     */
    void signal(String name) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid()))
                    .redirectErrorStream(true).start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new AssertionError("kill -" + name + " " + process.pid() + " failed: "
                        + new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** Kills the process and every descendant with SIGKILL, like a machine that dies. */
    void kill() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            kill();
        }
    }
}
