package io.dlock.etcd.internal;

import io.etcd.jetcd.ByteSequence;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The key layout, for a prefix {@code P} (default {@code dlock/}): one live key per acquisition
 * (holder or queued waiter), whose value is the acquisition's owner id and whose lease is the
 * client's etcd lease. The key is {@code P locks/ENCODED_NAME/CLIENT_ID}, the client's reusable
 * key of the name ({@code c} and 128 random bits, the same for all its acquisitions of the name, one
 * after another, so that a name's range does not fill with the deleted keys of past acquisitions),
 * or {@code P locks/ENCODED_NAME/OWNER_ID} for an acquisition that overlaps another of the same
 * client on the same name.
 *
 * <p>{@code ENCODED_NAME} is the lock name's UTF-8 bytes with every byte outside
 * {@code [A-Za-z0-9_-]} written as {@code %XX} (upper-case hex). The encoding is injective and
 * never contains {@code /}, so the {@code /} after it ends the name: the keys of {@code a} are not
 * in the prefix range of {@code ab}, nor those of {@code a/b} in that of {@code a}.
 *
 * <p>Besides, {@code P guards/LEASE_ID_HEX}, empty, attached to that etcd lease: written only when
 * an acquisition ends whose create may still be in flight (see {@link EtcdLease#guardRevision()}),
 * at most one per lease, gone with the lease.
 */
final class Keys {

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private final String root;
    private final String guards;

    Keys(String prefix) {
        this.root = prefix + "locks/";
        this.guards = prefix + "guards/";
    }

    /**
     * @return the guard key of one etcd lease of this client, {@code P guards/LEASE_ID_HEX}: see
     *     {@link EtcdLease#guardRevision()}
     */
    ByteSequence guard(long leaseId) {
        return ByteSequence.from(guards + Long.toHexString(leaseId), StandardCharsets.UTF_8);
    }

    /** @return the prefix of every key of one lock name, ending in {@code /} */
    ByteSequence namePrefix(String name) {
        return ByteSequence.from(nameString(name), StandardCharsets.UTF_8);
    }

    /** @return the key of one acquisition: {@code leaf} is the client's key id or the owner id */
    ByteSequence key(String name, String leaf) {
        return ByteSequence.from(nameString(name) + leaf, StandardCharsets.UTF_8);
    }

    private String nameString(String name) {
        return root + encode(name) + "/";
    }

    /** Percent-encodes every UTF-8 byte outside {@code [A-Za-z0-9_-]}. */
    static String encode(String name) {
        byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length + 8);
        for (byte b : bytes) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-') {
                out.write(c);
            } else {
                out.write('%');
                out.write(HEX[c >> 4]);
                out.write(HEX[c & 0xf]);
            }
        }
        return out.toString(StandardCharsets.US_ASCII);
    }

    @Override
    public String toString() {
        return root;
    }
}
