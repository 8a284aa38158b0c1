package io.dlock.cli;

import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Optional;

/** Finds programs the way {@code execvp} does: a name with a slash as it is, others on the PATH. */
final class Executables {

    private Executables() { }

    /**
     * Finds a program on the PATH.
     *
     * @param name a program name without a slash
     * @param path the PATH value (null or empty: nothing is found)
     * @return the first executable regular file of that name in a PATH directory
     */
    static Optional<Path> find(String name, String path) {
        if (path == null || path.isEmpty()) {
            return Optional.empty();
        }
        for (String entry : path.split(":", -1)) {
            try {
                Path candidate = Path.of(entry.isEmpty() ? "." : entry).resolve(name);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return Optional.of(candidate);
                }
            } catch (InvalidPathException e) {
                // not a usable directory: go on
            }
        }
        return Optional.empty();
    }

    /**
     * Tells why a program cannot be run, if it cannot.
     *
     * @param program the program as given: a path if it has a slash, otherwise a name on the PATH
     * @param path the PATH value
     * @return null if it can be run, otherwise the reason
     */
    static String problem(String program, String path) {
        if (program.isEmpty()) {
            return "empty program name";
        }
        if (!program.contains("/")) {
            return find(program, path).isPresent() ? null : "not found on the PATH";
        }
        Path p;
        try {
            p = Path.of(program);
        } catch (InvalidPathException e) {
            return "not a valid path";
        }
        if (!Files.exists(p)) {
            return "no such file";
        }
        if (!Files.isRegularFile(p)) {
            return "not a regular file";
        }
        return Files.isExecutable(p) ? null : "not executable (permission denied)";
    }
}
