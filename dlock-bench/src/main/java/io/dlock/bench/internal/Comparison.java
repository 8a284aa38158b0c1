package io.dlock.bench.internal;

import io.dlock.bench.BenchConfig;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The side-by-side comparison: for each backend, starts its server, runs the forks one after
 * another, and writes the figures, the ratios and the targets into {@code docs/BENCHMARKS.md}
 * (between its result markers) and every fork's raw figures into a TSV file beside it.
 *
 * <p>Arguments: {@code [--forks N] [--backends redis,zookeeper,etcd,dynamodb,postgres,redis_sentinel,redis_cluster,redlock] [--warmup DURATION]
 * [--measure DURATION] [--held N] [--skip CONTENDER,...] [--out FILE]}; durations in ISO-8601
 * ({@code PT2S}). Without {@code --backends}, every backend. {@code --skip} leaves contenders out
 * by their report name; the report then shows no ratios to them.
 */
public final class Comparison {

    static final String START = "<!-- bench:results:start -->";
    static final String END = "<!-- bench:results:end -->";

    private Comparison() { }

    /**
     * @param args see the class comment
     * @throws Exception if a server or a fork fails: nothing is written then
     */
    public static void main(String[] args) throws Exception {
        int forks = 2;
        List<Backend> backends = List.of(Backend.values());
        BenchConfig.Builder builder = BenchConfig.builder();
        Path out = Path.of("docs/BENCHMARKS.md");
        List<String> skip = List.of();
        for (int i = 0; i < args.length; i++) {
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--forks":
                    forks = Integer.parseInt(v);
                    i++;
                    break;
                case "--backends":
                    backends = new ArrayList<>();
                    for (String b : v.split(",")) {
                        backends.add(Backend.of(b));
                    }
                    i++;
                    break;
                case "--warmup":
                    builder.warmup(Duration.parse(v));
                    i++;
                    break;
                case "--measure":
                    builder.measure(Duration.parse(v));
                    i++;
                    break;
                case "--held":
                    builder.heldLocks(Integer.parseInt(v));
                    i++;
                    break;
                case "--skip":
                    skip = List.of(v.split(","));
                    i++;
                    break;
                case "--out":
                    out = Path.of(v);
                    i++;
                    break;
                default:
                    throw new IllegalArgumentException("unknown argument " + args[i]
                            + " (known: --forks, --backends, --warmup, --measure, --held, --skip, --out)");
            }
        }
        if (forks < 1) {
            throw new IllegalArgumentException("--forks must be at least 1, was " + forks);
        }
        BenchConfig config = builder.build();
        System.err.println("[bench] " + config + ", forks=" + forks + ", backends=" + backends + (skip.isEmpty() ? "" : ", skip=" + skip));
        long t0 = System.nanoTime();
        Report report = new Report(config, forks);
        for (Backend b : backends) {
            try (LocalServer server = LocalServer.start(b)) {
                System.err.println("[bench] " + b.title() + ": " + server.description() + " on " + server.deployment());
                report.server(b, server.description());
                for (int f = 0; f < forks; f++) {
                    // the held-locks figures (10,000 locks) are taken once, in the first fork
                    runFork(b, server, f, config, f == 0 ? config.heldLocks() : 0, skip, report);
                }
            }
        }
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        String when = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'").withZone(ZoneOffset.UTC).format(Instant.now());
        report.write(out, when, took);
        System.err.println("[bench] done in " + took.toMinutes() + " min " + took.toSecondsPart() + " s; wrote " + out);
    }

    private static void runFork(Backend b, LocalServer server, int fork, BenchConfig config, int held, List<String> skip,
                                Report report)
            throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>();
        String clientCpus = clientCpus();
        if (clientCpus != null) {
            cmd.addAll(List.of("taskset", "-c", clientCpus));
        }
        cmd.addAll(List.of(java, "-Xms2g", "-Xmx2g",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-Ddlock.bench.only=" + System.getProperty("dlock.bench.only", ""),
                "-Ddlock.bench.skip=" + String.join(",", skip),
                "-cp", System.getProperty("java.class.path"),
                ForkMain.class.getName(), b.name(), server.deployment().toArgument(), Integer.toString(fork),
                Long.toString(config.warmup().toMillis()), Long.toString(config.measure().toMillis()),
                Long.toString(config.leaseTime().toMillis()), Integer.toString(held), Long.toString(config.seed())));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.startsWith("REQUEST\t")) {
                    String[] f = line.split("\t");
                    report.requestCost(b, f[1], Double.parseDouble(f[2]));
                } else if (line.startsWith("RESULT\t")) {
                    String[] f = line.split("\t");
                    report.add(b, fork, f[1], Figure.valueOf(f[2]), Double.parseDouble(f[3]));
                } else {
                    System.err.println(line);
                }
            }
        }
        if (!p.waitFor(30, TimeUnit.MINUTES) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException(b.title() + " fork " + fork + " failed (exit " + (p.isAlive() ? "none" : p.exitValue())
                    + "); see its output above");
        }
    }

    /** @return the CPUs the forks (the clients) are pinned to, or null when they are not pinned */
    static String clientCpus() {
        String cpus = System.getProperty("dlock.bench.clientCpus", "");
        return cpus.isBlank() ? null : cpus;
    }

    /** @return the CPUs the servers are pinned to, or null */
    static String serverCpus() {
        String cpus = System.getProperty("dlock.bench.serverCpus", "");
        return cpus.isBlank() ? null : cpus;
    }

    /** Collects the forks' figures and writes them. */
    static final class Report {

        private final BenchConfig config;
        private final int forks;
        private final Map<Backend, Map<String, Map<Figure, List<Double>>>> values = new EnumMap<>(Backend.class);
        private final Map<Backend, String> servers = new EnumMap<>(Backend.class);
        private final StringBuilder tsv = new StringBuilder("backend\tfork\tcontender\tfigure\tvalue\n");

        Report(BenchConfig config, int forks) {
            this.config = config;
            this.forks = forks;
        }

        private final Map<Backend, Map<String, Double>> requestCosts = new EnumMap<>(Backend.class);

        void requestCost(Backend b, String request, double micros) {
            requestCosts.computeIfAbsent(b, k -> new LinkedHashMap<>()).put(request, micros);
        }

        Map<String, Double> requestCosts(Backend b) {
            return requestCosts.getOrDefault(b, Map.of());
        }

        void server(Backend b, String description) {
            servers.put(b, description);
        }

        void add(Backend b, int fork, String contender, Figure figure, double value) {
            values.computeIfAbsent(b, k -> new LinkedHashMap<>()).computeIfAbsent(contender, k -> new EnumMap<>(Figure.class))
                    .computeIfAbsent(figure, k -> new ArrayList<>()).add(value);
            tsv.append(b.name().toLowerCase(Locale.ROOT)).append('\t').append(fork).append('\t').append(contender).append('\t')
                    .append(figure.name()).append('\t').append(String.format(Locale.ROOT, "%.3f", value)).append('\n');
        }

        /** @return the mean over the forks, or NaN when not measured */
        double value(Backend b, String contender, Figure f) {
            List<Double> v = values.getOrDefault(b, Map.of()).getOrDefault(contender, Map.of()).get(f);
            if (v == null || v.isEmpty()) {
                return Double.NaN;
            }
            return v.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
        }

        void write(Path out, String when, Duration took) throws IOException {
            String tsvName = out.getFileName().toString().replaceAll("\\.md$", "") + "-forks.tsv";
            Path tsvPath = out.resolveSibling(tsvName);
            Files.writeString(tsvPath, tsv.toString(), StandardCharsets.UTF_8);
            String section = new ReportWriter(this, config, forks).markdown(when, took, tsvName);
            String doc = Files.exists(out) ? Files.readString(out, StandardCharsets.UTF_8)
                    : "# Benchmarks\n\n" + START + "\n" + END + "\n";
            int a = doc.indexOf(START);
            int z = doc.indexOf(END);
            if (a < 0 || z < a) {
                throw new IllegalStateException(out + " has no " + START + " ... " + END + " markers to write between");
            }
            Files.writeString(out, doc.substring(0, a + START.length()) + "\n" + section + doc.substring(z),
                    StandardCharsets.UTF_8);
        }

        Map<Backend, Map<String, Map<Figure, List<Double>>>> values() {
            return values;
        }

        String server(Backend b) {
            return servers.get(b);
        }
    }
}
