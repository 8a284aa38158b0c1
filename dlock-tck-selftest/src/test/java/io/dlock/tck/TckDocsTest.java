package io.dlock.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.tck.mem.BrokenProviders;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Holds docs/TCK.md's table of broken providers to {@link BrokenProviders}: same providers, bugs
 * and rules, in the same order. Run with {@code -Ddlock.tck.writeDocs=true} to rewrite the table
 * from the code.
 */
class TckDocsTest {

    private static final String HEADER = "| broken provider | its bug | rules that must catch it | may also fail |\n"
            + "|---|---|---|---|\n";

    static String table() {
        return BrokenProviders.all().stream()
                .map(m -> "| `" + m.scheme() + "` | " + m.bug() + " | "
                        + m.caughtBy().stream().map(Rule::name).collect(Collectors.joining(", ")) + " | "
                        + m.mayAlsoFail().stream().map(Rule::name).collect(Collectors.joining(", ")) + " |")
                .collect(Collectors.joining("\n", "", "\n"));
    }

    @Test
    void theTableOfBrokenProvidersMatchesTheCode() throws Exception {
        Path doc = Path.of("..", "docs", "TCK.md");
        String text = Files.readString(doc, StandardCharsets.UTF_8);
        int start = text.indexOf(HEADER);
        assertTrue(start >= 0, "docs/TCK.md has the table of broken providers");
        int from = start + HEADER.length();
        int to = text.indexOf("\n\n", from);
        String inDoc = text.substring(from, to < 0 ? text.length() : to + 1);
        if (Boolean.getBoolean("dlock.tck.writeDocs")) {
            Files.writeString(doc, text.substring(0, from) + table() + text.substring(to < 0 ? text.length() : to + 1),
                    StandardCharsets.UTF_8);
            return;
        }
        assertEquals(table(), inDoc, "docs/TCK.md's table of broken providers; regenerate with -Ddlock.tck.writeDocs=true");
    }
}
