package io.dlock.spi.support;

import java.security.SecureRandom;

/**
 * Unguessable random ids, from one shared {@link SecureRandom}. Thread-safe; never blocks once the
 * JVM's entropy source is seeded.
 */
public final class Ids {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private Ids() { }

    /**
     * Returns a fresh id for a lock owner: 128 random bits as 32 lower-case hex digits.
     *
     * @return the id
     */
    public static String ownerId() {
        return randomHex(16);
    }

    /**
     * Returns random bytes as lower-case hex digits, two per byte.
     *
     * @param bytes how many random bytes, 1 to 64
     * @return the hex text, {@code 2 * bytes} characters
     * @throws IllegalArgumentException if {@code bytes} is out of range
     */
    public static String randomHex(int bytes) {
        if (bytes < 1 || bytes > 64) {
            throw new IllegalArgumentException("bytes must be 1 to 64, was " + bytes);
        }
        byte[] b = new byte[bytes];
        RANDOM.nextBytes(b);
        char[] out = new char[2 * bytes];
        for (int i = 0; i < bytes; i++) {
            out[2 * i] = HEX[(b[i] >> 4) & 0xF];
            out[2 * i + 1] = HEX[b[i] & 0xF];
        }
        return new String(out);
    }
}
