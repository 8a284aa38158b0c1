package io.dlock.tck;

/** Control of a backend's server process, for the TCK's fault rules. Every call blocks until done. */
public interface ServerControl {

    /** Suspends the server process (SIGSTOP): connections stay open, nothing is answered. */
    void pause();

    /** Resumes a paused server (SIGCONT). */
    void resume();

    /** Kills the server process without a clean shutdown (SIGKILL). */
    void kill();

    /** Starts the server again on the same address after {@link #kill()}, with whatever it persisted. */
    void restart();

    /**
     * Whether {@link #restart()} brings the server back without the locks it held: a server run
     * without persistence, as many Redis deployments are. S11 needs such a restart.
     *
     * @return false by default
     */
    default boolean restartLosesLocks() {
        return false;
    }
}
