package io.dlock.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Parses and prints durations the way people type them: {@code 500ms}, {@code 10s}, {@code 1.5s},
 * {@code 2m}, {@code 1h}, a plain number of seconds, or ISO-8601 ({@code PT10S}).
 */
final class Durations implements CommandLine.ITypeConverter<Duration> {

    private static final Pattern SIMPLE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h)?");

    /** Creates the converter (picocli does this). */
    public Durations() { }

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    /**
     * Parses a duration.
     *
     * @param value the text
     * @return the duration, zero or positive
     * @throws CommandLine.TypeConversionException if the text is not a duration
     */
    public static Duration parse(String value) {
        String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
        Matcher m = SIMPLE.matcher(v);
        if (m.matches()) {
            double n = Double.parseDouble(m.group(1));
            String unit = m.group(2) == null ? "s" : m.group(2);
            double millis = switch (unit) {
                case "ms" -> n;
                case "m" -> n * 60_000;
                case "h" -> n * 3_600_000;
                default -> n * 1000;
            };
            return Duration.ofNanos(Math.round(millis * 1_000_000));
        }
        try {
            Duration d = Duration.parse(value.trim().toUpperCase(Locale.ROOT));
            if (!d.isNegative()) {
                return d;
            }
        } catch (DateTimeParseException e) {
            // fall through to the message below
        }
        throw new CommandLine.TypeConversionException("'" + value
                + "' is not a duration: write e.g. 500ms, 10s, 1.5s, 2m, 1h or PT10S");
    }

    /**
     * Formats a duration briefly: {@code 850ms}, {@code 1.8s}, {@code 2m05s}.
     *
     * @param d the duration
     * @return the text
     */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms < 1000) {
            return ms + "ms";
        }
        if (ms < 60_000) {
            return String.format(Locale.ROOT, "%.1fs", ms / 1000.0);
        }
        return String.format(Locale.ROOT, "%dm%02ds", ms / 60_000, (ms / 1000) % 60);
    }
}
