package io.dlock.zookeeper.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.internal.Names;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.zookeeper.common.PathUtils;
import org.junit.jupiter.api.Test;

class NameCodecTest {

    private static final List<String> TRICKY = List.of(
            "a", "A", "a/b", "a%2Fb", "a%2fb", "a_2Fb", "a%252Fb", "a\\b", "a b", "a+b", "a*", "a?", "a:b", "a::b",
            ".", "..", "...", "/", "//", "a/", "/a", "a/../b", "./a", "%", "%25", "%%", "_", "__", "_a", "a_",
            "zookeeper", "/zookeeper", "zookeeper/quota", "ünïcödé", "unicode", "名前", "\uD83D\uDD12", "é", "e\u0301",
            "prefix", "prefix-longer", "prefix/", "prefix:", "{tag}", "lock-0000000001", "\u007F", "\u00A0", "\uFFFD",
            "x".repeat(512), "名".repeat(512), "\uD83D\uDD12".repeat(256));

    @Test
    void encodingIsInjectiveAndRoundTrips() {
        Map<String, String> seen = new HashMap<>();
        for (String name : TRICKY) {
            String segment = NameCodec.encode(name);
            assertEquals(name, NameCodec.decode(segment), "round trip of '" + name + "'");
            String other = seen.put(segment, name);
            assertEquals(null, other, "'" + name + "' and '" + other + "' share the segment " + segment);
        }
    }

    @Test
    void everyEncodingIsOneValidSegment() {
        for (String name : TRICKY) {
            String segment = NameCodec.encode(name);
            assertFalse(segment.contains("/"), segment);
            assertNotEquals(".", segment);
            assertNotEquals("..", segment);
            assertTrue(segment.startsWith("_"), segment);
            PathUtils.validatePath("/dlock/" + segment); // throws if ZooKeeper would reject it
            for (char c : segment.toCharArray()) {
                assertTrue(c > 0x20 && c < 0x7F, "only printable ASCII in " + segment);
            }
        }
    }

    @Test
    void readableNamesStayReadable() {
        assertEquals("_payment:order-42", NameCodec.encode("payment:order-42"));
        assertEquals("_a%2Fb", NameCodec.encode("a/b"));
        assertEquals("_a%252Fb", NameCodec.encode("a%2Fb"));
        assertEquals("_.", NameCodec.encode("."));
        assertEquals("_..", NameCodec.encode(".."));
        assertEquals("_%C3%A9", NameCodec.encode("é"));
    }

    @Test
    void longestNamesStayBounded() {
        // the worst case is 3 UTF-8 bytes per UTF-16 char, each escaped to 3 characters
        assertEquals(1 + 512 * 9, NameCodec.encode("名".repeat(512)).length());
        assertTrue(NameCodec.encode("\uD83D\uDD12".repeat(256)).length() <= 1 + 512 * 9);
    }

    /** Random valid names, seeded: decode(encode(x)) == x for all of them proves injectivity on them. */
    @Test
    void randomNamesRoundTrip() {
        SplittableRandom random = new SplittableRandom(20261121L);
        Map<String, String> seen = new HashMap<>();
        for (int i = 0; i < 20_000; i++) {
            String name = randomName(random);
            Names.validate(name);
            String segment = NameCodec.encode(name);
            assertEquals(name, NameCodec.decode(segment));
            String other = seen.put(segment, name);
            assertTrue(other == null || other.equals(name), "collision: '" + name + "' and '" + other + "'");
        }
    }

    private static String randomName(SplittableRandom random) {
        int length = 1 + random.nextInt(random.nextInt(4) == 0 ? 512 : 12);
        StringBuilder b = new StringBuilder();
        while (b.length() < length) {
            int kind = random.nextInt(5);
            int cp;
            if (kind == 0) {
                cp = "%/._-:aA0".charAt(random.nextInt(9));
            } else if (kind == 1) {
                cp = 0x20 + random.nextInt(0x5F);
            } else if (kind == 2) {
                cp = 0xA0 + random.nextInt(0xD800 - 0xA0);
            } else if (kind == 3) {
                cp = 0xE000 + random.nextInt(0x10000 - 0xE000);
            } else {
                cp = 0x10000 + random.nextInt(0x10FFFF - 0x10000);
            }
            if (Character.isISOControl(cp) || b.length() + Character.charCount(cp) > length) {
                continue;
            }
            b.appendCodePoint(cp);
        }
        return b.toString();
    }

    @Test
    void malformedSegmentsAreRejected() {
        for (String bad : List.of("", "a", "_%", "_%4", "_%GG", "_a/b", "_é")) {
            assertThrows(IllegalArgumentException.class, () -> NameCodec.decode(bad), bad);
        }
    }

    @Test
    void lockNodeNamesParseAndSortBySequence() {
        String owner = "0123456789abcdef0123456789abcdef";
        List<String> children = new ArrayList<>(List.of(
                LockNode.namePrefix(owner) + "0000000010",
                LockNode.namePrefix(owner.replace('0', 'f')) + "0000000002",
                "not-a-lock-node",
                "lock-short-0000000001",
                LockNode.namePrefix(owner) + "x000000001"));
        List<LockNode> queue = LockNode.queue(children);
        assertEquals(2, queue.size(), "foreign children are ignored");
        assertEquals(2, queue.get(0).sequence);
        assertEquals(10, queue.get(1).sequence);
        assertEquals(owner, queue.get(1).ownerId);
    }
}
