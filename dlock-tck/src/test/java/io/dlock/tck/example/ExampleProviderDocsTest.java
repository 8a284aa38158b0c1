package io.dlock.tck.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Holds docs/TCK.md's copy of the example provider to its source, which the TCK runs. */
class ExampleProviderDocsTest {

    private static final String MARKER = "<!-- example-provider:";

    @Test
    void theDocsQuoteTheExampleProviderAsItIs() throws Exception {
        String doc = Files.readString(Path.of("..", "docs", "TCK.md"), StandardCharsets.UTF_8);
        String source = Files.readString(Path.of("src", "test", "java", "io", "dlock", "tck", "example",
                "ExampleProvider.java"), StandardCharsets.UTF_8);
        int marker = doc.indexOf(MARKER);
        assertTrue(marker >= 0, "docs/TCK.md marks the example provider with " + MARKER);
        int from = doc.indexOf("```java\n", marker) + "```java\n".length();
        int to = doc.indexOf("```\n", from);
        assertTrue(from > marker && to > from, "a java block follows the marker");
        assertEquals(source, doc.substring(from, to),
                "docs/TCK.md's example provider differs from ExampleProvider.java: copy the source into the docs");
    }
}
