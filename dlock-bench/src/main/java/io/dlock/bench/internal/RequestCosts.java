package io.dlock.bench.internal;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/** Times requests of several kinds, one at a time, in rounds, and gives each kind's median. */
public final class RequestCosts {

    private RequestCosts() { }

    /**
     * Sends every request once per round, in order, then {@code afterRound} (not timed), for the
     * warm-up and then the measured time.
     *
     * @param requests the requests, by the name to report them under
     * @param afterRound puts the server back as the first request expects it, or null
     * @param warmup time spent before measuring
     * @param measure time measured
     * @return the median time of each request kind, in µs, by name, in the order given
     * @throws Exception what a request threw
     */
    public static Map<String, Double> medians(Map<String, Callable<?>> requests, Callable<?> afterRound,
                                              Duration warmup, Duration measure) throws Exception {
        Map<String, Samples> samples = new LinkedHashMap<>();
        requests.keySet().forEach(k -> samples.put(k, new Samples()));
        long warmEnd = System.nanoTime() + warmup.toNanos();
        long end = warmEnd + measure.toNanos();
        long now;
        while ((now = System.nanoTime()) < end) {
            boolean record = now >= warmEnd;
            for (Map.Entry<String, Callable<?>> r : requests.entrySet()) {
                long t0 = System.nanoTime();
                r.getValue().call();
                if (record) {
                    samples.get(r.getKey()).add(System.nanoTime() - t0);
                }
            }
            if (afterRound != null) {
                afterRound.call();
            }
        }
        Map<String, Double> out = new LinkedHashMap<>();
        samples.forEach((k, v) -> out.put(k, v.percentile(0.5) / 1_000.0));
        return out;
    }
}
