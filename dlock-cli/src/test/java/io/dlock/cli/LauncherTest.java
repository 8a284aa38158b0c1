package io.dlock.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code ./dlock} launcher's first run, with stand-ins for {@code mvn} and {@code java} on the
 * PATH (the real build would install into the shared Maven repository): it says that it builds and
 * where the log goes before Maven starts, keeps Maven's output in that log, and on a failed build
 * shows Maven's errors and the log's path. It used to be silent for as long as Maven took.
 */
class LauncherTest {

    @TempDir
    Path dir;

    /** A copy of the launcher in a tree of its own, with no built jar, and stand-ins for mvn and java. */
    private Path launcher(String mvnBody) throws IOException {
        Path script = Path.of(System.getProperty("user.dir")).getParent().resolve("dlock");
        assertTrue(Files.isRegularFile(script), "the launcher at " + script);
        Path root = Files.createDirectories(dir.resolve("repo"));
        Path copy = root.resolve("dlock");
        Files.copy(script, copy, StandardCopyOption.COPY_ATTRIBUTES);
        Path bin = Files.createDirectories(dir.resolve("bin"));
        executable(bin.resolve("mvn"), "#!/bin/sh\n" + mvnBody);
        // prints what it would run, so the test sees the launcher hand over to the built jar
        executable(bin.resolve("java"), "#!/bin/sh\necho \"java $*\"\n");
        return copy;
    }

    private static void executable(Path file, String body) throws IOException {
        Files.writeString(file, body, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private record Run(int exit, String stdout, String stderr) { }

    private Run run(Path launcher, String... args) throws Exception {
        Path out = dir.resolve("stdout.txt");
        Path err = dir.resolve("stderr.txt");
        ProcessBuilder pb = new ProcessBuilder(launcherCommand(launcher, args)).redirectOutput(out.toFile())
                .redirectError(err.toFile());
        pb.environment().put("PATH", dir.resolve("bin") + ":/usr/bin:/bin");
        pb.environment().put("LAUNCHER_STDERR", err.toString());
        pb.environment().remove("DLOCK_SKIP_BUILD");
        Process p = pb.start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the launcher finished");
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    private static List<String> launcherCommand(Path launcher, String... args) {
        List<String> cmd = new java.util.ArrayList<>(List.of("bash", launcher.toString()));
        cmd.addAll(List.of(args));
        return cmd;
    }

    @Test
    void theFirstRunSaysItBuildsAndWhereTheLogGoesBeforeMavenStarts() throws Exception {
        // the stand-in Maven records what the launcher had printed when it started, then "builds" the jar
        Path launcher = launcher("echo \"mvn $*\"\necho \"stderr when mvn started: $(cat \"$LAUNCHER_STDERR\")\"\n"
                + "mkdir -p dlock-cli/target/lib && touch dlock-cli/target/dlock.jar\n");
        Run r = run(launcher, "--version");
        Path root = launcher.getParent();
        Path log = root.resolve("dlock-cli/target/dlock-build.log");
        assertEquals(0, r.exit(), r.toString());
        List<String> lines = r.stderr().lines().toList();
        assertTrue(lines.get(0).startsWith("dlock: building the command line with Maven (first run, or sources "
                + "changed)") && lines.get(0).endsWith("log: " + log), r.stderr());
        assertTrue(lines.get(1).matches("dlock: built in [0-9]+ s"), r.stderr());
        String logText = Files.readString(log);
        assertTrue(logText.contains("stderr when mvn started: dlock: building the command line"), logText);
        assertTrue(logText.contains("install -pl dlock-cli -am"), logText);
        assertTrue(r.stdout().contains("-jar " + root.resolve("dlock-cli/target/dlock.jar") + " --version"), r.stdout());
    }

    @Test
    void aFailedBuildShowsMavensErrorsAndTheLog() throws Exception {
        Path launcher = launcher("echo '[INFO] Scanning for projects...'\necho '[ERROR] Failed to execute goal: "
                + "something broke'\nexit 1\n");
        Run r = run(launcher, "--version");
        Path log = launcher.getParent().resolve("dlock-cli/target/dlock-build.log");
        assertEquals(1, r.exit(), r.toString());
        assertTrue(r.stderr().contains("[ERROR] Failed to execute goal: something broke"), r.stderr());
        assertTrue(!r.stderr().contains("[INFO]"), "only Maven's errors reach the terminal: " + r.stderr());
        assertTrue(r.stderr().contains("dlock: the build failed; the whole Maven output is in " + log), r.stderr());
        assertTrue(r.stdout().isEmpty(), "nothing was run: " + r.stdout());
    }
}
