package io.dlock.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Holds docs/FENCING.md's code to the tests that run it: each {@code <!-- fencing:NAME FILE -->}
 * marker in the doc is followed by a code block that must be, line for line, the code between
 * {@code // fencing:NAME} and {@code // end fencing:NAME} in FILE (a test in dlock-postgres,
 * dlock-redis or dlock-dynamodb, run against its real server), indentation removed.
 */
class FencingDocsTest {

    private static final Pattern MARKER = Pattern.compile("<!-- fencing:([a-z0-9-]+) ([^ ]+) -->\\n```[a-z]*\\n(.*?)```\\n",
            Pattern.DOTALL);

    /** One example per kind of resource at least, as issue 15 asks. */
    private static final Set<String> REQUIRED = Set.of("sql-fence-column", "sql-version-column", "sql-idempotency-key",
            "redis-lua", "dynamodb-condition");

    @Test
    void theDocsQuoteTheTestedExamplesAsTheyAre() throws Exception {
        Path root = Path.of("..");
        String doc = Files.readString(root.resolve("docs/FENCING.md"), StandardCharsets.UTF_8);
        Matcher m = MARKER.matcher(doc);
        Set<String> seen = new TreeSet<>();
        while (m.find()) {
            String name = m.group(1);
            Path source = root.resolve(m.group(2));
            assertTrue(Files.isRegularFile(source), "docs/FENCING.md quotes " + source + ", which does not exist");
            assertEquals(region(Files.readString(source, StandardCharsets.UTF_8), name, source), m.group(3),
                    "docs/FENCING.md's example '" + name + "' differs from " + m.group(2) + ": copy the code into the docs");
            seen.add(name);
        }
        assertTrue(seen.containsAll(REQUIRED), "docs/FENCING.md quotes " + seen + "; it must quote " + REQUIRED);
    }

    /** The lines between the markers, with their common indentation removed, each ending in a newline. */
    private static String region(String text, String name, Path source) {
        String begin = "// fencing:" + name + "\n";
        String end = "// end fencing:" + name + "\n";
        int from = text.indexOf(begin);
        assertTrue(from >= 0, source + " has no '" + begin.trim() + "'");
        from += begin.length();
        int to = text.indexOf(end, from);
        assertTrue(to > 0, source + " has no '" + end.trim() + "'");
        to = text.lastIndexOf('\n', to) + 1;
        List<String> lines = new ArrayList<>(List.of(text.substring(from, to).split("\n", -1)));
        lines.remove(lines.size() - 1);
        int indent = Integer.MAX_VALUE;
        for (String line : lines) {
            if (!line.isBlank()) {
                indent = Math.min(indent, line.length() - line.stripLeading().length());
            }
        }
        StringBuilder out = new StringBuilder();
        for (String line : lines) {
            out.append(line.isBlank() ? "" : line.substring(indent)).append('\n');
        }
        return out.toString();
    }
}
