package io.dlock.bench.internal;

import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * One lock implementation under measurement: dlock on a backend, a peer library, or the raw
 * client calls (the floor). Implementations are thread-safe.
 */
public interface Contender {

    /** @return the name in reports, e.g. {@code "Redisson RLock"} */
    String name();

    /**
     * @return whether a blocked acquire waits for the holder's release (so hand-off is
     *     measurable); true but for the floors
     */
    default boolean waits() {
        return true;
    }

    /**
     * @return whether held locks are kept alive by the library itself (so renewal load is
     *     measurable); true but for the floors
     */
    default boolean renews() {
        return true;
    }

    /**
     * Opens a client with its own connections, as one application replica would.
     *
     * @param deployment what to talk to: one server (the benchmark may put a counting proxy in
     *     front of it) or the nodes of a deployment of several
     * @param lease the lease (or session, or watchdog) time to hold locks with
     * @return the open client; the caller closes it
     * @throws Exception if the client cannot connect
     */
    Session connect(Deployment deployment, Duration lease) throws Exception;

    /**
     * A contender that talks to one server: it implements the single-address form, and a
     * deployment of several nodes is refused ({@link Deployment#server()}).
     */
    interface OnOneServer extends Contender {

        /**
         * Opens a client with its own connections, as one application replica would.
         *
         * @param server the server to talk to (the benchmark may put a counting proxy in front of it)
         * @param lease the lease (or session, or watchdog) time to hold locks with
         * @return the open client; the caller closes it
         * @throws Exception if the client cannot connect
         */
        Session connect(InetSocketAddress server, Duration lease) throws Exception;

        /**
         * Connects to the one server of the deployment.
         *
         * @throws IllegalStateException if the deployment has several nodes
         */
        @Override
        default Session connect(Deployment deployment, Duration lease) throws Exception {
            return connect(deployment.server(), lease);
        }
    }

    /** A client of one contender. Its methods may be called from many threads at once. */
    interface Session extends AutoCloseable {

        /**
         * Takes the named lock, waiting as long as it takes.
         *
         * @param key the lock name
         * @return the held lock
         * @throws Exception if the backend fails
         */
        Held acquire(String key) throws Exception;

        /** Closes the client; held locks are left to expire. Never throws a checked exception. */
        @Override
        void close();
    }

    /** A held lock. Released by the thread that acquired it. */
    interface Held {

        /**
         * Releases the lock.
         *
         * @throws Exception if the backend fails
         */
        void release() throws Exception;
    }
}
