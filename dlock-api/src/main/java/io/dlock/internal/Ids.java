package io.dlock.internal;

import java.security.SecureRandom;

/** Unguessable owner ids: 128 random bits as 32 lower-case hex digits. */
public final class Ids {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private Ids() { }

    /** @return a fresh owner id */
    public static String newOwnerId() {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        char[] out = new char[32];
        for (int i = 0; i < 16; i++) {
            out[2 * i] = HEX[(b[i] >> 4) & 0xF];
            out[2 * i + 1] = HEX[b[i] & 0xF];
        }
        return new String(out);
    }
}
