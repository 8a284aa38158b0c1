package io.dlock.bench.internal;

import io.dlock.bench.BenchConfig;
import java.util.Locale;

/** Every figure the benchmark reports, with its unit. */
public enum Figure {
    /** Uncontended acquire+release, median. */
    CYCLE_P50("uncontended acquire+release p50", "µs"),
    /** Uncontended acquire+release, 99th percentile. */
    CYCLE_P99("uncontended acquire+release p99", "µs"),
    /** Network round trips per uncontended cycle, counted at a proxy. */
    ROUND_TRIPS("round trips per cycle", ""),
    /** Release returns until the next waiter holds, 2 waiters, median. */
    HANDOFF_2_P50("hand-off, 2 waiters, p50", "µs"),
    /** Same, 99th percentile. */
    HANDOFF_2_P99("hand-off, 2 waiters, p99", "µs"),
    /** Release returns until the next waiter holds, 16 waiters, median. */
    HANDOFF_16_P50("hand-off, 16 waiters, p50", "µs"),
    /** Same, 99th percentile. */
    HANDOFF_16_P99("hand-off, 16 waiters, p99", "µs"),
    /** Share of grants under contention (16 waiters) that went to another client than the last holder. */
    HANDOFF_16_SHARE("grants to another client, 16 waiters", "%"),
    /** Acquire+release cycles per second over 1,000 keys, 1 thread. */
    THROUGHPUT_1("throughput, K keys, 1 thread", "/s"),
    /** Same with 16 threads sharing one client. */
    THROUGHPUT_16("throughput, K keys, T threads", "/s"),
    /** Requests per second that keep many held locks alive. */
    RENEWAL_RATE("renewal requests while holding N locks", "/s"),
    /** Held locks whose release found them lost (expired for want of renewal) after the window. */
    LOST_WHILE_HELD("held locks lost during the hold", ""),
    /** Heap retained per held lock. */
    HEAP_PER_LOCK("heap per held lock", "B"),
    /** Threads one client starts. */
    CLIENT_THREADS("threads per client", ""),
    /** Threads added by holding N locks. */
    THREADS_FOR_HELD("threads added by N held locks", "");

    private final String label;
    private final String unit;

    Figure(String label, String unit) {
        this.label = label;
        this.unit = unit;
    }

    /**
     * @param config the run's sizes: the N of held locks, the K keys and T threads of throughput
     * @return the label, with its unit
     */
    public String label(BenchConfig config) {
        String l = label.replace("N", String.format(Locale.ROOT, "%,d", config.heldLocks()))
                .replace("K", String.format(Locale.ROOT, "%,d", config.keys()))
                .replace("T", Integer.toString(config.threads()));
        return unit.isEmpty() ? l : l + " (" + unit + ")";
    }

    /**
     * @param value a value of this figure
     * @return it formatted for a report
     */
    public String format(double value) {
        if (Double.isNaN(value)) {
            return "n/a";
        }
        if (this == ROUND_TRIPS) {
            return String.format(Locale.ROOT, "%.2f", value);
        }
        if (Math.abs(value) >= 100 || value == Math.rint(value)) {
            return String.format(Locale.ROOT, "%,.0f", value);
        }
        return String.format(Locale.ROOT, "%.1f", value);
    }
}
