package io.dlock.cli;

import java.io.PrintStream;
import java.util.Locale;

/**
 * A progress line for long steps: redrawn in place on a terminal, printed at each quarter
 * otherwise (so that logs and tests stay readable). Thread-safe.
 */
final class Progress {

    private final PrintStream out;
    private final String label;
    private final int total;
    private final boolean terminal;
    private int done;
    private int lastQuarter;

    Progress(PrintStream out, String label, int total) {
        this.out = out;
        this.label = label;
        this.total = Math.max(1, total);
        this.terminal = System.console() != null && System.getenv("TERM") != null && !"dumb".equals(System.getenv("TERM"));
    }

    /** Counts one unit of work done. */
    synchronized void step() {
        done = Math.min(total, done + 1);
        if (terminal) {
            int width = 30;
            int filled = done * width / total;
            out.printf(Locale.ROOT, "\r  %s [%s%s] %d/%d", label, "#".repeat(filled), ".".repeat(width - filled), done, total);
            if (done == total) {
                out.println();
            }
            out.flush();
            return;
        }
        int quarter = done * 4 / total;
        if (quarter > lastQuarter) {
            lastQuarter = quarter;
            out.printf(Locale.ROOT, "  %s %d/%d%n", label, done, total);
        }
    }
}
