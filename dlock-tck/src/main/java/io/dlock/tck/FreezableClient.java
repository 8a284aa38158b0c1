package io.dlock.tck;

import io.dlock.LockClient;

/** A client with a network the TCK can freeze, see {@link TckFixture#openFreezable}. */
public interface FreezableClient extends AutoCloseable {

    /** @return the client */
    LockClient client();

    /** Stops all traffic between the client and the backend, both ways. */
    void freeze();

    /**
     * Makes the client look crashed to the server: its connections are cut and every new one
     * stalls, until {@link #unfreeze()}. By default the same as {@link #freeze()}.
     */
    default void crash() {
        freeze();
    }

    /** Lets traffic flow again; what was held back is delivered. */
    void unfreeze();

    /**
     * The network faults this client's link can inject besides {@link #freeze()} and
     * {@link #crash()}. Rules draw only from these; a fault kind missing here skips the parts of
     * rules that need it.
     *
     * @return the kinds {@link #inject(NetworkFault)} accepts; empty by default
     */
    default java.util.Set<NetworkFault> faults() {
        return java.util.Set.of();
    }

    /**
     * Injects a network fault, which lasts until {@link #heal()} (except {@link NetworkFault#RESET},
     * which is one event). One fault at a time: injecting another first heals the current one.
     *
     * @param fault the kind, one of {@link #faults()} or {@link NetworkFault#FREEZE}
     * @throws UnsupportedOperationException if this link cannot inject that kind
     */
    default void inject(NetworkFault fault) {
        if (fault == NetworkFault.FREEZE) {
            freeze();
            return;
        }
        throw new UnsupportedOperationException("this fixture's link cannot inject " + fault);
    }

    /** Ends the current fault (as {@link NetworkFault} describes for each kind) and lets traffic flow. */
    default void heal() {
        unfreeze();
    }

    /** Unfreezes, closes the client and whatever carries its traffic. */
    @Override
    void close();
}
