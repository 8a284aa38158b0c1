package io.dlock.etcd.internal;

/** Lets the tests of {@code io.dlock.etcd} encode lock names as the backend does. */
public final class KeysAccess {

    private KeysAccess() { }

    /**
     * Encodes a lock name as it appears in keys.
     *
     * @param name the lock name
     * @return the encoded name
     */
    public static String encode(String name) {
        return Keys.encode(name);
    }
}
