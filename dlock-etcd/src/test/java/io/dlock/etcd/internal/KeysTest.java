package io.dlock.etcd.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The key layout and the name encoding. */
class KeysTest {

    private static final List<String> NAMES = List.of("a", "A", "a/b", "a%2Fb", "a%2fb", "a_2Fb", "a\\b", "a b", "a+b",
            "a*", "a?", "a:b", "a::b", ".", "..", "/", "//", "a/", "/a", "ünïcödé", "unicode", "名前", "\uD83D\uDD12",
            "%", "%25", "ab", "a-b", "a_b", "prefix", "prefix-longer", "x".repeat(512));

    @Test
    void theEncodingIsInjectiveAndHasNoSlash() {
        Map<String, String> seen = new HashMap<>();
        for (String n : NAMES) {
            String e = Keys.encode(n);
            assertFalse(e.contains("/"), n + " -> " + e);
            assertTrue(e.matches("[A-Za-z0-9_%-]+"), n + " -> " + e);
            String before = seen.put(e, n);
            assertTrue(before == null, "'" + n + "' and '" + before + "' both encode to " + e);
        }
        assertEquals("a%2Fb", Keys.encode("a/b"));
        assertEquals("a%252Fb", Keys.encode("a%2Fb"));
        assertEquals("%C3%BC", Keys.encode("ü"));
        assertEquals("A-z_09", Keys.encode("A-z_09"));
    }

    @Test
    void aNamesPrefixNeverCoversAnotherNamesKeys() {
        Keys keys = new Keys("dlock/");
        List<String> prefixes = new ArrayList<>();
        for (String n : NAMES) {
            prefixes.add(keys.namePrefix(n).toString(StandardCharsets.UTF_8));
        }
        for (int i = 0; i < NAMES.size(); i++) {
            String key = keys.key(NAMES.get(i), "0123456789abcdef0123456789abcdef").toString(StandardCharsets.UTF_8);
            assertTrue(key.startsWith("dlock/locks/"), key);
            for (int j = 0; j < NAMES.size(); j++) {
                assertEquals(i == j, key.startsWith(prefixes.get(j)),
                        "the key of '" + NAMES.get(i) + "' vs the prefix of '" + NAMES.get(j) + "'");
            }
        }
        assertEquals("dlock/locks/a/", keys.namePrefix("a").toString(StandardCharsets.UTF_8));
        assertEquals("p/locks/a%20b/o", new Keys("p/").key("a b", "o").toString(StandardCharsets.UTF_8));
    }

    @Test
    void ttlsAreLeaseTimesRoundedUpToWholeSeconds() {
        assertEquals(2, io.dlock.spi.support.LeaseTimes.ceilSeconds(Duration.ofSeconds(2)));
        assertEquals(3, io.dlock.spi.support.LeaseTimes.ceilSeconds(Duration.ofMillis(2001)));
        assertEquals(3, io.dlock.spi.support.LeaseTimes.ceilSeconds(Duration.ofMillis(2999)));
        assertEquals(1, io.dlock.spi.support.LeaseTimes.ceilSeconds(Duration.ofMillis(10)));
        assertEquals(3600, io.dlock.spi.support.LeaseTimes.ceilSeconds(Duration.ofHours(1)));
    }
}
