package io.dlock.cli;

/** A failure the command reports with a one-line message and a given exit status. */
final class CliException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The status to exit with, see {@link ExitCodes}. */
    private final int exitCode;

    /**
     * Creates the exception.
     *
     * @param exitCode the status to exit with, see {@link ExitCodes}
     * @param message what to print after {@code dlock: }
     */
    public CliException(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    /**
     * Creates the exception with a cause.
     *
     * @param exitCode the status to exit with, see {@link ExitCodes}
     * @param message what to print after {@code dlock: }
     * @param cause the underlying failure
     */
    public CliException(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    /** @return the status to exit with */
    public int exitCode() {
        return exitCode;
    }
}
