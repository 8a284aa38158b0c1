package io.dlock.tck;

import java.util.ArrayList;
import java.util.List;

/**
 * The reference fenced resource: a register that accepts a read or a write only with a fencing
 * token at least as high as the highest it has seen, as a database that stores the token with the
 * data would. A holder whose lease silently expired carries a lower token than its successor, so
 * once the successor has touched the register, every access of the stale holder is rejected.
 * Keeps a log of every accepted and rejected access for the checker. Thread-safe.
 */
final class FencedRegister {

    /** One access, in the order the register saw it. */
    public record Access(String who, boolean write, long token, long value, boolean accepted, long at) { }

    private long highest;
    private long value;
    private final List<Access> log = new ArrayList<>();

    /**
     * Reads the value under a token.
     *
     * @param who a label for the log
     * @param token the reader's fencing token
     * @return the value, or empty (as {@code OptionalLong}) if the token is stale
     */
    public synchronized java.util.OptionalLong read(String who, long token) {
        boolean ok = token >= highest;
        log.add(new Access(who, false, token, value, ok, System.nanoTime()));
        if (!ok) {
            return java.util.OptionalLong.empty();
        }
        highest = token;
        return java.util.OptionalLong.of(value);
    }

    /**
     * Writes a value under a token.
     *
     * @param who a label for the log
     * @param token the writer's fencing token
     * @param newValue the value
     * @return true if accepted, false if the token is stale
     */
    public synchronized boolean write(String who, long token, long newValue) {
        boolean ok = token >= highest;
        log.add(new Access(who, true, token, newValue, ok, System.nanoTime()));
        if (ok) {
            highest = token;
            value = newValue;
        }
        return ok;
    }

    /** @return the current value */
    public synchronized long value() {
        return value;
    }

    /** @return a copy of the access log */
    public synchronized List<Access> log() {
        return new ArrayList<>(log);
    }
}
