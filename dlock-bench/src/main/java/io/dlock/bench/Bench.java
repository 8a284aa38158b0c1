package io.dlock.bench;

import io.dlock.bench.internal.DlockContender;
import io.dlock.bench.internal.Figure;
import io.dlock.bench.internal.Workloads;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Measures dlock against a user's own deployment: the workloads of the side-by-side comparison
 * ({@code ./scripts/bench}), with dlock only, on the backend a URI names. Lock names start with
 * {@code bench-} and carry a random run id, so a run never touches an application's locks; every
 * lock taken is released before {@link #run} returns (or left to expire if the run fails). Round trips and renewal requests are not
 * counted here (that needs a proxy in front of the server; the comparison has one).
 */
public final class Bench {

    private Bench() { }

    /** One measured figure. Immutable. */
    public static final class Measurement {

        private final String label;
        private final double value;
        private final String formatted;

        private Measurement(String label, double value, String formatted) {
            this.label = label;
            this.value = value;
            this.formatted = formatted;
        }

        /** @return what was measured, with its unit, e.g. {@code "uncontended acquire+release p50 (µs)"} */
        public String label() {
            return label;
        }

        /** @return the value in the label's unit, NaN when it could not be measured */
        public double value() {
            return value;
        }

        /** @return the value formatted for people */
        public String formatted() {
            return formatted;
        }

        @Override
        public String toString() {
            return label + ": " + formatted;
        }
    }

    /**
     * Runs every workload once against the backend at {@code uri}, one after another, on this
     * thread (it starts up to 17 clients and threads of its own and stops them).
     *
     * @param uri the backend's URI, as {@code LockClient.open} takes it
     * @param config durations and sizes
     * @param progress told what is being measured, as it starts
     * @return the figures, in report order
     * @throws IllegalArgumentException if an argument is null or the URI is not valid
     * @throws io.dlock.LockBackendException if the backend fails (the run stops there)
     * @throws InterruptedException if interrupted; the clients are closed first
     */
    public static List<Measurement> run(String uri, BenchConfig config, Consumer<String> progress)
            throws InterruptedException {
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException("uri must not be null or blank");
        }
        if (config == null || progress == null) {
            throw new IllegalArgumentException((config == null ? "config" : "progress") + " must not be null");
        }
        String runId = Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong());
        Workloads w = new Workloads(config, progress, runId);
        DlockContender dlock = new DlockContender("dlock", ignored -> uri);
        Map<Figure, Double> figures = new EnumMap<>(Figure.class);
        try {
            figures.putAll(w.uncontended(List.of(dlock), null).get(dlock.name()));
            figures.putAll(w.handoff(dlock, null, 2));
            figures.putAll(w.handoff(dlock, null, 16));
            figures.putAll(w.throughput(dlock, null, 1));
            figures.putAll(w.throughput(dlock, null, config.threads()));
            if (config.heldLocks() > 0) {
                figures.putAll(w.held(dlock, null, null));
            }
        } catch (InterruptedException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("the benchmark failed: " + e, e);
        }
        List<Measurement> out = new ArrayList<>();
        for (Map.Entry<Figure, Double> e : figures.entrySet()) {
            Figure f = e.getKey();
            double v = Objects.requireNonNullElse(e.getValue(), Double.NaN);
            out.add(new Measurement(f.label(config), v, f.format(v)));
        }
        return out;
    }
}
