package io.dlock.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The README's "Operating dlock" section names every meter, tag and tag value, and shows the log
 * lines in the shapes the core writes them (the shapes the other tests check the real log against).
 */
class OperatingDocsTest {

    private static String section() throws IOException {
        Path dir = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        while (dir != null && !Files.exists(dir.resolve("README.md"))) {
            dir = dir.getParent();
        }
        assertTrue(dir != null, "README.md not found above " + System.getProperty("user.dir"));
        String readme = Files.readString(dir.resolve("README.md"), StandardCharsets.UTF_8);
        int start = readme.indexOf("\n## Operating dlock\n");
        assertTrue(start >= 0, "the README has an Operating dlock section");
        int end = readme.indexOf("\n## ", start + 1);
        return readme.substring(start, end < 0 ? readme.length() : end);
    }

    @Test
    void everyMeterTagAndTagValueIsDocumented() throws IOException {
        String doc = section();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MicrometerLockListener.create(registry).forClient("redis"); // registers every meter at zero
        List<Meter> meters = registry.getMeters();
        assertEquals(13, meters.size(), "6 acquire outcomes, hold, 2 renewal results, 3 lost reasons, held: " + meters);
        for (Meter m : meters) {
            assertTrue(doc.contains("| `" + m.getId().getName() + "` | " + type(m) + " |"),
                    m.getId().getName() + " as a " + type(m) + " in the meter table");
            for (Tag t : m.getId().getTags()) {
                assertTrue(doc.contains("`" + t.getKey() + "`"), "tag " + t.getKey());
                if (!t.getKey().equals(MicrometerLockListener.TAG_BACKEND)) {
                    assertTrue(doc.contains("`" + t.getValue() + "`"), "tag value " + t.getValue());
                }
            }
        }
        assertTrue(doc.contains("`" + MicrometerLockListener.TAG_LOCK + "`"));
        assertTrue(doc.contains(".tagLockNames(true)"));
    }

    private static String type(Meter m) {
        return m.getId().getType().name().toLowerCase(java.util.Locale.ROOT);
    }

    @Test
    void theLogLinesShownAreTheOnesTheCoreWrites() throws IOException {
        List<String> examples = section().lines().filter(l -> l.matches("^(WARN|INFO) io\\.dlock\\.Lease - .*"))
                .collect(Collectors.toList());
        assertMatchesOne(examples, LogLines.renewalFailed("[^']+", "\\d+"));
        assertMatchesOne(examples, LogLines.renewalRecovered("[^']+", "\\d+"));
        assertMatchesOne(examples, LogLines.leaseLost("[^']+", "\\d+", "EXPIRED"));
    }

    private static void assertMatchesOne(List<String> lines, Pattern p) {
        assertEquals(1, lines.stream().filter(l -> p.matcher(l).matches()).count(), p + " in " + lines);
    }
}
