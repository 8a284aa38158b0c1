package io.dlock.tck;

import io.dlock.spi.support.Arguments;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The compatibility report: each TCK run writes {@code <provider>.tsv} (rule, outcome, detail)
 * into the report directory, and {@link #writeMarkdown} turns every file there into one table,
 * {@code docs/COMPATIBILITY.md}.
 */
public final class TckReport {

    /** A rule's outcome in one run. */
    public enum Outcome {
        /** The rule held. */
        PASS,
        /** The rule was violated. */
        FAIL,
        /** The rule did not run: a capability, a fixture hook, or applicability was missing. */
        SKIPPED
    }

    private TckReport() { }

    /**
     * Writes one provider's results, keeping from its previous file the rules this run did not
     * check and the results of rules this run skipped (another suite of the provider may have run
     * them). The project's test command deletes the previous files first, so a build's report
     * only holds that build's results.
     *
     * @param dir the report directory
     * @param provider the provider name
     * @param results outcome and detail per rule
     * @throws UncheckedIOException if the file cannot be written
     */
    public static synchronized void writeResults(Path dir, String provider, Map<Rule, Map.Entry<Outcome, String>> results) {
        Arguments.notNull("dir", dir);
        Arguments.notNull("provider", provider);
        Arguments.notNull("results", results);
        // several suites (the contract and the fault tier) report into one column: keep the rules
        // this run did not cover from the provider's previous file
        Map<Rule, String[]> merged = new EnumMap<>(Rule.class);
        Map<Rule, String[]> previous = read(dir).get(provider);
        if (previous != null) {
            merged.putAll(previous);
        }
        for (Map.Entry<Rule, Map.Entry<Outcome, String>> e : results.entrySet()) {
            String[] before = merged.get(e.getKey());
            if (e.getValue().getKey() == Outcome.SKIPPED && before != null && !"SKIPPED".equals(before[0])) {
                continue; // another suite of this provider ran the rule (a cluster fixture, say): keep its result
            }
            String detail = e.getValue().getValue() == null ? "" : e.getValue().getValue().replaceAll("[\\t\\r\\n]+", " ");
            merged.put(e.getKey(), new String[] {e.getValue().getKey().name(), detail});
        }
        StringBuilder b = new StringBuilder("# rule\toutcome\tdetail (written by the dlock TCK)\n");
        for (Map.Entry<Rule, String[]> e : merged.entrySet()) {
            b.append(e.getKey()).append('\t').append(e.getValue()[0]).append('\t').append(e.getValue()[1]).append('\n');
        }
        try {
            Files.createDirectories(dir);
            replace(dir.resolve(provider + ".tsv"), b.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Keeps the figures of one randomized fault run (N1), one file per provider and run length, so
     * that a long run's figures stay when the short run of the test command overwrites its own.
     *
     * @param dir the report directory
     * @param provider the provider name, with {@code -cluster} appended for a run against a cluster
     * @param duration the run's length
     * @param line the figures, tab-separated: provider, fixture ({@code server} or {@code cluster}), duration,
     *     seed, client network faults by kind, client crashes, server pauses, server restarts, leader kills,
     *     member isolations, grants, stale writes rejected, stale writes accepted, lost updates, overlaps,
     *     faults after which no grant came in time
     * @throws UncheckedIOException if the file cannot be written
     */
    public static synchronized void writeNemesisFigures(Path dir, String provider, java.time.Duration duration, String line) {
        Arguments.notNull("dir", dir);
        Arguments.notNull("provider", provider);
        Arguments.notNull("duration", duration);
        Arguments.notNull("line", line);
        try {
            Files.createDirectories(dir);
            replace(dir.resolve(provider + ".N1-" + duration + ".run"), line + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static final int NEMESIS_COLUMNS = 16;

    private static List<String[]> readNemesisFigures(Path dir) {
        List<String[]> runs = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return runs;
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".run")).sorted()::iterator) {
                String line = Files.readString(f, StandardCharsets.UTF_8).trim();
                String[] parts = line.split("\t");
                if (parts.length == NEMESIS_COLUMNS) {
                    runs.add(parts);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return runs;
    }

    /**
     * Reads every provider's results from a directory.
     *
     * @param dir the report directory
     * @return provider name to rule results, sorted by provider
     * @throws UncheckedIOException if a file cannot be read
     */
    public static Map<String, Map<Rule, String[]>> read(Path dir) {
        Arguments.notNull("dir", dir);
        Map<String, Map<Rule, String[]>> all = new TreeMap<>();
        if (!Files.isDirectory(dir)) {
            return all;
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".tsv")).sorted()::iterator) {
                Map<Rule, String[]> rules = new EnumMap<>(Rule.class);
                for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                    if (line.startsWith("#") || line.isBlank()) {
                        continue;
                    }
                    String[] parts = line.split("\t", 3);
                    try {
                        rules.put(Rule.valueOf(parts[0]), new String[] {parts[1], parts.length > 2 ? parts[2] : ""});
                    } catch (IllegalArgumentException ignored) {
                        // a rule from another version of the TCK
                    }
                }
                String name = f.getFileName().toString();
                all.put(name.substring(0, name.length() - 4), rules);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return all;
    }

    /**
     * Writes the Markdown table of every provider's results.
     *
     * @param dir the report directory
     * @param out the Markdown file
     * @throws UncheckedIOException if a file cannot be read or written
     */
    public static void writeMarkdown(Path dir, Path out) {
        Arguments.notNull("dir", dir);
        Arguments.notNull("out", out);
        Map<String, Map<Rule, String[]>> all = read(dir);
        List<String> providers = new ArrayList<>(all.keySet());
        StringBuilder b = new StringBuilder();
        b.append("# Compatibility\n\n");
        b.append("Generated by the dlock TCK from the results of its last run of each provider ")
                .append("(`docs/tck-results/*.tsv`); do not edit by hand. Run the README's test command to ")
                .append("regenerate it. `pass` and `FAIL` are results of a run; `skipped` means the provider ")
                .append("does not declare the capability or the fixture offers no hook the rule needs, `n/a` that the ")
                .append("rule cannot apply to the backend, each with the reason below the table; `-` means the rule has not been run for that provider. See `docs/TCK.md` for ")
                .append("what each rule checks.\n\n");
        b.append("| rule | what it checks |");
        providers.forEach(p -> b.append(' ').append(p).append(" |"));
        b.append("\n|---|---|");
        providers.forEach(p -> b.append("---|"));
        b.append('\n');
        List<String> notes = new ArrayList<>();
        for (Rule rule : Rule.values()) {
            b.append("| ").append(rule).append(" | ").append(rule.title()).append(" |");
            for (String p : providers) {
                String[] r = all.get(p).get(rule);
                String cell = r == null ? "-" : switch (r[0]) {
                    case "PASS" -> "pass";
                    case "FAIL" -> "**FAIL**";
                    default -> r[1].startsWith("not applicable") ? "n/a" : "skipped";
                };
                if (r != null && !"PASS".equals(r[0]) && !r[1].isBlank()) {
                    notes.add("- " + p + " " + rule + ": " + r[1]);
                }
                b.append(' ').append(cell).append(" |");
            }
            b.append('\n');
        }
        if (!notes.isEmpty()) {
            b.append("\nNotes:\n\n");
            notes.forEach(n -> b.append(n).append('\n'));
        }
        List<String[]> runs = readNemesisFigures(dir);
        if (!runs.isEmpty()) {
            b.append("\n## Randomized fault runs (N1)\n\n")
                    .append("The last run of each length per provider and fixture. Four clients increment a fenced register ")
                    .append("under one lock while a nemesis injects network faults on their links (by kind: FREEZE holds ")
                    .append("bytes, DROP loses them both ways, DROP_ANSWERS and DROP_REQUESTS lose one direction, RESET ")
                    .append("sends RST, LATENCY adds 50-500 ms per chunk, BLACK_HOLE accepts and never forwards), crashes ")
                    .append("clients, pauses the server, kills and restarts it, kills a cluster's leader, or cuts a member ")
                    .append("off from its peers while clients still reach it. After every fault a grant must come within ")
                    .append("two lease times plus the operation timeout (the last column counts the faults after which ")
                    .append("none did). `./scripts/test` runs 30 s per fixture; the long runs come from ")
                    .append("`mvn -pl <module> -am install -Dtest='*FaultTckTest' -Dsurefire.failIfNoSpecifiedTests=false ")
                    .append("-Ddlock.tck.rules=N1 -Ddlock.tck.nemesis.duration=PT10M`.\n\n")
                    .append("| provider | fixture | length | seed | client network faults | client crashes | server pauses ")
                    .append("| server restarts | leader kills | member isolations | grants | stale writes rejected ")
                    .append("| stale writes accepted | lost updates | overlaps | faults without a grant in time |\n")
                    .append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
            for (String[] r : runs) {
                b.append('|');
                for (String cell : r) {
                    b.append(' ').append(cell).append(" |");
                }
                b.append('\n');
            }
        }
        try {
            Files.createDirectories(out.toAbsolutePath().getParent());
            replace(out, b.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Writes a file whole or not at all: suites of a parallel build (one JVM per module) write the
     * shared report at once, and a reader must never see half of one writer's text.
     */
    private static void replace(Path file, String text) throws IOException {
        Path tmp = Files.createTempFile(file.toAbsolutePath().getParent(), file.getFileName().toString(), ".tmp");
        try {
            Files.writeString(tmp, text, StandardCharsets.UTF_8);
            Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
