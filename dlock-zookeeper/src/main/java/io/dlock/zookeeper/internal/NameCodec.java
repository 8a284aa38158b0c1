package io.dlock.zookeeper.internal;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Maps a lock name to one ZooKeeper path segment, injectively: the segment is {@code _} followed
 * by the name's UTF-8 bytes, where every byte outside {@code [A-Za-z0-9_.:-]} is written as
 * {@code %XX} (upper-case hex). Because {@code %} itself is always escaped, decoding is
 * unambiguous, so two different names never share a segment; because of the leading {@code _}, a
 * segment is never {@code .} or {@code ..}; and it never contains {@code /} or a character that
 * ZooKeeper rejects in paths. A name of 512 UTF-16 characters gives at most 4,609 characters.
 */
final class NameCodec {

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private NameCodec() { }

    static String encode(String name) {
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        StringBuilder b = new StringBuilder(utf8.length + 8).append('_');
        for (byte x : utf8) {
            int c = x & 0xFF;
            if (plain(c)) {
                b.append((char) c);
            } else {
                b.append('%').append(HEX[c >> 4]).append(HEX[c & 0xF]);
            }
        }
        return b.toString();
    }

    /**
     * Decodes a segment made by {@link #encode}.
     *
     * @throws IllegalArgumentException if {@code segment} was not made by {@link #encode}
     */
    static String decode(String segment) {
        if (segment.isEmpty() || segment.charAt(0) != '_') {
            throw new IllegalArgumentException("not an encoded lock name: " + segment);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(segment.length());
        for (int i = 1; i < segment.length(); i++) {
            char c = segment.charAt(i);
            if (c == '%') {
                if (i + 2 >= segment.length()) {
                    throw new IllegalArgumentException("truncated escape in " + segment);
                }
                int hi = Character.digit(segment.charAt(i + 1), 16);
                int lo = Character.digit(segment.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    throw new IllegalArgumentException("bad escape in " + segment);
                }
                out.write(hi << 4 | lo);
                i += 2;
            } else if (c < 0x80 && plain(c)) {
                out.write(c);
            } else {
                throw new IllegalArgumentException("unexpected character in " + segment);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static boolean plain(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '_' || c == '-' || c == '.' || c == ':';
    }
}
