package io.dlock.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** TCK rule V1, for names, in the core. */
class NamesTest {

    private static void rejected(String name, String why) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Names.validate(name),
                "accepted: " + why);
        assertTrue(e.getMessage().startsWith("name "), "the message names the parameter: " + e.getMessage());
    }

    @Test
    void nullAndEmptyAreRejected() {
        rejected(null, "null");
        rejected("", "empty");
    }

    @Test
    void tooLongIsRejectedAndTheMessageShowsTheLength() {
        rejected("x".repeat(513), "513 characters");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Names.validate("y".repeat(10_000)));
        assertTrue(e.getMessage().contains("10000"), e.getMessage());
        assertTrue(e.getMessage().length() < 200, "the message repeats the whole name");
    }

    @ParameterizedTest
    @ValueSource(strings = {"a\u0000b", "tab\there", "new\nline", "cr\r", "del\u007f", "c1\u0085", "\u009f"})
    void controlCharactersAreRejected(String name) {
        rejected(name, "control character");
    }

    @ParameterizedTest
    @ValueSource(strings = {"\ud800", "a\ud800b", "\udc00", "a\udc00\ud800", "end\ud83d"})
    void loneSurrogatesAreRejected(String name) {
        rejected(name, "lone surrogate");
    }

    @Test
    void theMessageSaysWhereTheBadCharacterIs() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Names.validate("ab\u0001"));
        assertTrue(e.getMessage().contains("U+0001") && e.getMessage().contains("index 2"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"a", "payment:order-42", "/", "..", "../../etc/passwd", "a/b/../c", "Ünïcödé",
        "日本語のロック", "emoji \ud83d\udd12 lock", " leading and trailing ", "%2F", "*", "key with\u00a0nbsp"})
    void ordinaryAndTrickyNamesAreAccepted(String name) {
        assertSame(name, Names.validate(name));
    }

    @Test
    void exactlyTheMaximumLengthIsAccepted() {
        String max = "z".repeat(Names.MAX_LENGTH);
        assertEquals(512, Names.MAX_LENGTH);
        assertSame(max, Names.validate(max));
        // a surrogate pair at the very end is well-formed
        String pairAtEnd = "z".repeat(510) + "\ud83d\udd12";
        assertSame(pairAtEnd, Names.validate(pairAtEnd));
    }
}
