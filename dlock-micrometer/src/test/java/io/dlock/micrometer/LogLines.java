package io.dlock.micrometer;

import java.util.regex.Pattern;

/** The shapes of the core's log lines that operators read (README, "Operating dlock"). */
final class LogLines {

    private LogLines() { }

    /** The first renewal failure of a streak. */
    static Pattern renewalFailed(String lock, String token) {
        return Pattern.compile(".*WARN io\\.dlock\\.Lease - dlock: renewal failed: lock '" + lock + "' token " + token
                + ", \\d+ ms of validity left, retrying every \\d+ ms until then; cause: \\w+(: .+)?");
    }

    /** A renewal that succeeds after a streak of failures. */
    static Pattern renewalRecovered(String lock, String token) {
        return Pattern.compile(".*INFO io\\.dlock\\.Lease - dlock: renewal recovered: lock '" + lock + "' token " + token
                + " renewed after \\d+ failed attempt\\(s\\) over \\d+ ms; \\d+ ms of validity left");
    }

    /** A lost lease. */
    static Pattern leaseLost(String lock, String token, String reason) {
        return Pattern.compile(".*WARN io\\.dlock\\.Lease - dlock: lease lost: lock '" + lock + "' token " + token
                + ", reason " + reason + ", \\d+ ms of validity left \\(lease time \\d+ ms, held for \\d+ ms\\); "
                + "cause: .+");
    }
}
