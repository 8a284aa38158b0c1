package io.dlock.bench.internal;

import java.util.Arrays;

/** A growable list of nanosecond samples with percentiles. Not thread-safe. */
public final class Samples {

    private long[] values = new long[1024];
    private int size;

    /** @param nanos one sample */
    public void add(long nanos) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = nanos;
    }

    /** @return the number of samples */
    public int size() {
        return size;
    }

    /**
     * @param fraction between 0 and 1, e.g. 0.99
     * @return the sample at that rank (nearest rank), or NaN without samples
     */
    public double percentile(double fraction) {
        if (size == 0) {
            return Double.NaN;
        }
        long[] sorted = Arrays.copyOf(values, size);
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(fraction * size) - 1;
        return sorted[Math.max(0, Math.min(size - 1, rank))];
    }
}
