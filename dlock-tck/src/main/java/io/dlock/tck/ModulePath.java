package io.dlock.tck;

import io.dlock.spi.support.Arguments;
import io.dlock.LockClient;
import io.dlock.Lease;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.module.ModuleDescriptor;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Runs a provider on the module path, in a child JVM, to prove that its module is sealed and
 * works there as it does on the class path: {@code io.dlock} and the provider's module are named
 * (not automatic) modules exporting exactly their public packages, the provider is found through
 * {@code provides}, and a lock is acquired and released through it.
 *
 * <p>The child's module path is the calling test's class path (Surefire's
 * {@code surefire.test.class.path}) without its test classes and without the jars the caller
 * excludes: a jar whose packages clash with another's cannot be on the module path, and JUnit is
 * not needed there. Stateless and thread-safe.
 */
public final class ModulePath {

    private ModulePath() { }

    /**
     * What the child printed and how it ended.
     *
     * @param exitCode the child's exit status: 0 when every check passed
     * @param output what it printed, both streams
     */
    public record Result(int exitCode, String output) {

        /**
         * @throws IllegalArgumentException if {@code output} is {@code null}
         */
        public Result {
            Arguments.notNull("output", output);
        }
    }

    /**
     * Starts a child JVM with the caller's dependencies on the module path, checks the sealing of
     * {@code io.dlock} and of {@code module}, and acquires and releases a lock on {@code uri}.
     *
     * @param module the provider's module, e.g. {@code io.dlock.redis}
     * @param exported the packages it must export, no more and no fewer
     * @param uri the backend to lock on, reachable from the child
     * @param exclude substrings of class path entries to leave off the module path
     * @return the child's result; its output says which check failed
     * @throws IllegalStateException if the child does not end within a minute, or on interrupt (flag kept)
     * @throws UncheckedIOException if it cannot be started
     */
    public static Result probe(String module, Set<String> exported, String uri, String... exclude) {
        Arguments.notNull("module", module);
        Arguments.notNull("exported", exported);
        Arguments.notNull("uri", uri);
        Arguments.notNull("exclude", exclude);
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> modulePath = new ArrayList<>();
        for (String entry : classPath.split(File.pathSeparator)) {
            boolean skip = entry.isEmpty() || entry.endsWith("test-classes") || entry.contains("surefire");
            for (String e : exclude) {
                skip |= entry.contains(e);
            }
            if (!skip) {
                modulePath.add(entry);
            }
        }
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--module-path", String.join(File.pathSeparator, modulePath), "--add-modules", "ALL-MODULE-PATH",
                "-m", "io.dlock.tck/" + ModulePath.class.getName(), module, String.join(",", exported), uri);
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            byte[] out;
            try (var in = p.getInputStream()) {
                out = in.readAllBytes(); // ends when the child does: it closes its streams on exit
            }
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("the module-path child did not end within 60 s");
            }
            return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("could not start a JVM on the module path", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the module-path child", e);
        }
    }

    /**
     * The child's side of {@link #probe}: prints what it checks and exits 0 when everything holds,
     * 1 otherwise.
     *
     * @param args the provider's module, its exported packages comma-separated, and the URI
     */
    public static void main(String[] args) {
        try {
            check(args[0], Set.of(args[1].split(",")), args[2]);
            System.out.println("[module-path] every check passed");
            System.exit(0);
        } catch (RuntimeException | AssertionError e) {
            System.out.println("[module-path] FAILED: " + e);
            System.exit(1);
        }
    }

    private static void check(String module, Set<String> exported, String uri) {
        Module api = LockClient.class.getModule();
        expect(api.isNamed() && api.getName().equals("io.dlock") && !api.getDescriptor().isAutomatic(),
                "io.dlock is a named, explicit module: " + api);
        expect(exports(api).equals(Set.of("io.dlock", "io.dlock.spi", "io.dlock.spi.support")),
                "io.dlock exports io.dlock, io.dlock.spi and io.dlock.spi.support only: " + exports(api));
        Optional<Module> backend = ModuleLayer.boot().findModule(module);
        expect(backend.isPresent(), module + " is on the module path");
        ModuleDescriptor d = backend.get().getDescriptor();
        expect(!d.isAutomatic(), module + " is an explicit module, not an automatic one");
        expect(exports(backend.get()).equals(new TreeSet<>(exported)), module + " exports " + new TreeSet<>(exported)
                + " only: " + exports(backend.get()));
        expect(d.provides().stream().anyMatch(p -> p.service().equals("io.dlock.spi.LockProvider")),
                module + " provides io.dlock.spi.LockProvider");
        Set<String> found = ServiceLoader.load(io.dlock.spi.LockProvider.class).stream()
                .map(p -> p.type().getModule().getName()).collect(Collectors.toCollection(TreeSet::new));
        expect(found.contains(module), "ServiceLoader finds the provider of " + module + ": " + found);
        System.out.println("[module-path] " + api.getDescriptor().toNameAndVersion() + " exports " + exports(api) + "; "
                + d.toNameAndVersion() + " exports " + exports(backend.get()) + "; providers in " + found);
        try (LockClient client = LockClient.open(uri)) {
            Lease lease = client.lock("module-path-probe").tryAcquire(Duration.ofSeconds(10))
                    .orElseThrow(() -> new AssertionError("the lock was not granted"));
            expect(lease.isValid() && lease.fencingToken() > 0, "a valid lease with a token: " + lease);
            lease.release();
            System.out.println("[module-path] acquired and released through " + client + ", token " + lease.fencingToken());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static Set<String> exports(Module m) {
        return m.getDescriptor().exports().stream().filter(e -> !e.isQualified()).map(ModuleDescriptor.Exports::source)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    private static void expect(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
        System.out.println("[module-path] ok: " + what);
    }
}
