package io.dlock.zookeeper.internal;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A lock node's name, {@code lock-<owner id>-<sequence>}: the owner id (32 hex digits) makes the
 * path unique for ever, so deleting by path can never hit another grant's node; the sequence
 * (appended by ZooKeeper) orders the queue.
 */
final class LockNode {

    static final String PREFIX = "lock-";
    private static final int OWNER_LENGTH = 32;
    private static final int SEQ_START = PREFIX.length() + OWNER_LENGTH + 1;

    final String name;
    final String ownerId;
    final long sequence;

    private LockNode(String name, String ownerId, long sequence) {
        this.name = name;
        this.ownerId = ownerId;
        this.sequence = sequence;
    }

    /** @return the name ZooKeeper appends the sequence to */
    static String namePrefix(String ownerId) {
        return PREFIX + ownerId + "-";
    }

    /** @return the parsed node, or null for a child that is not a dlock lock node */
    static LockNode parse(String child) {
        if (child.length() <= SEQ_START || !child.startsWith(PREFIX) || child.charAt(SEQ_START - 1) != '-') {
            return null;
        }
        String owner = child.substring(PREFIX.length(), SEQ_START - 1);
        for (int i = 0; i < owner.length(); i++) {
            if (Character.digit(owner.charAt(i), 16) < 0) {
                return null;
            }
        }
        try {
            return new LockNode(child, owner, Long.parseLong(child.substring(SEQ_START)));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** @return the lock nodes among the children, in queue order */
    static List<LockNode> queue(List<String> children) {
        List<LockNode> nodes = new ArrayList<>(children.size());
        for (String child : children) {
            LockNode n = parse(child);
            if (n != null) {
                nodes.add(n);
            }
        }
        nodes.sort(Comparator.comparingLong((LockNode n) -> n.sequence).thenComparing(n -> n.name));
        return nodes;
    }
}
