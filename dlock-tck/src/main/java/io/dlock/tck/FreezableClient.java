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

    /** Unfreezes, closes the client and whatever carries its traffic. */
    @Override
    void close();
}
