package io.dlock.cli;

/**
 * The exit statuses of the {@code dlock} command. {@code exec} and {@code elect} otherwise exit
 * with their command's own status, so a command that itself exits with 2 to 5 cannot be told
 * apart from these by the status alone; dlock prints a line on standard error whenever it is the
 * one that decides the status.
 */
final class ExitCodes {

    /** Success; for {@code exec} and {@code elect}, the command exited with 0. */
    public static final int OK = 0;
    /** An unexpected error, or a rule failed ({@code tck}), or the demo's checks failed ({@code demo}). */
    public static final int FAILED = 1;
    /**
     * Bad usage or configuration: an unknown option, a missing or malformed argument, a bad URI, or
     * a configuration the backend refuses (a {@link io.dlock.LockConfigurationException}: rejected
     * credentials, a denied permission, a missing table, a TLS mismatch, a server dlock cannot use).
     */
    public static final int USAGE = 2;
    /** {@code exec}: the lock was not acquired within {@code --wait}. */
    public static final int NOT_ACQUIRED = 3;
    /** {@code exec}: the lease was lost while the command ran; the command was stopped. */
    public static final int LEASE_LOST = 4;
    /** The backend could not be reached, or failed in a way a retry may not meet, within the operation timeout. */
    public static final int UNREACHABLE = 5;
    /** {@code exec} and {@code elect}: the command could not be started (not found, not executable). */
    public static final int CANNOT_RUN = 127;

    private ExitCodes() { }

    /** @return the exit-code list shown by {@code --help} */
    static String[] helpList() {
        return new String[] {
            "0:success (exec, elect: the command exited with 0)",
            "1:unexpected error; tck: a rule failed; demo: a check failed",
            "2:usage error: bad option, argument or URI; the backend refuses the configuration",
            "3:exec: lock not acquired within --wait",
            "4:exec: lease lost while the command ran; it was stopped",
            "5:backend unreachable or failing (a retry may succeed)",
            "127:exec, elect: the command could not be started",
            "other:exec, elect: the command's own exit status",
        };
    }
}
