package io.dlock.tck;

import io.dlock.spi.support.Arguments;
import io.dlock.Lease;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Records intervals during which a lease was proven held, and checks them: no two intervals of
 * different grants overlap, and tokens increase in the order the intervals start. An interval
 * counts only if the lease was valid when the holder entered it and still valid when it left:
 * a holder that cannot prove it held the lock proves nothing. Times come from one JVM's
 * {@link System#nanoTime()}, so they are comparable. Thread-safe.
 */
public final class HoldLog {

    /** Creates an empty log. */
    public HoldLog() { }

    /** One proven hold. */
    public record Hold(String who, long token, long start, long end) {

        /**
         * @throws IllegalArgumentException if {@code who} is {@code null}
         */
        public Hold {
            Arguments.notNull("who", who);
        }
    }

    private final List<Hold> holds = new ArrayList<>();
    private int unproven;

    /**
     * Marks the start of a hold; call right after the grant.
     *
     * @param lease the lease
     * @return the start time, or -1 if the lease was already not valid
     */
    public long enter(Lease lease) {
        Arguments.notNull("lease", lease);
        long t = System.nanoTime();
        return lease.isValid() ? t : -1;
    }

    /**
     * Marks the end of a hold; call right before release.
     *
     * @param who a label for messages (client and thread)
     * @param lease the lease
     * @param start what {@link #enter} returned
     */
    public void exit(String who, Lease lease, long start) {
        Arguments.notNull("who", who);
        Arguments.notNull("lease", lease);
        boolean valid = lease.isValid();
        long t = System.nanoTime();
        synchronized (this) {
            if (start < 0 || !valid) {
                unproven++;
            } else {
                holds.add(new Hold(who, lease.fencingToken(), start, t));
            }
        }
    }

    /** @return the proven holds, by start time */
    public synchronized List<Hold> holds() {
        List<Hold> copy = new ArrayList<>(holds);
        copy.sort(Comparator.comparingLong(Hold::start));
        return copy;
    }

    /** @return how many holds could not be proven (validity lost inside) */
    public synchronized int unproven() {
        return unproven;
    }

    /** @return the first pair of overlapping holds, described, if any */
    public Optional<String> overlap() {
        List<Hold> sorted = holds();
        for (int i = 1; i < sorted.size(); i++) {
            Hold a = sorted.get(i - 1);
            Hold b = sorted.get(i);
            if (b.start() - a.end() < 0) {
                return Optional.of(a.who() + " (token " + a.token() + ") held until " + a.end() + " but "
                        + b.who() + " (token " + b.token() + ") held from " + b.start()
                        + ", both valid at both ends (" + (a.end() - b.start()) / 1000 + " us of overlap)");
            }
        }
        return Optional.empty();
    }

    /** @return the first place where tokens do not increase in hold order, described, if any */
    public Optional<String> tokenRegression() {
        List<Hold> sorted = holds();
        for (int i = 1; i < sorted.size(); i++) {
            Hold a = sorted.get(i - 1);
            Hold b = sorted.get(i);
            if (b.token() <= a.token()) {
                return Optional.of(b.who() + " got token " + b.token() + " after " + a.who() + " held token " + a.token());
            }
        }
        return Optional.empty();
    }
}
