package io.dlock.zookeeper.internal;

import io.dlock.spi.support.RetryingCleaner;
import io.dlock.spi.support.RetryingCleaner.Outcome;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;

/**
 * Deletes lock nodes this client no longer wants but could not delete at the time: the nodes of
 * leases reported lost while the connection was suspended, releases and abandons that failed, and
 * creates whose outcome was unknown. A lock node is ephemeral, so it would otherwise stay (and block
 * the lock) for as long as the session lives. The retrying is the support kit's
 * {@link RetryingCleaner} (backoff from 50 ms to 1 s, kicked on every reconnection, one thread of
 * the client's factory that exists only while there is work); what is ZooKeeper's stays here: what
 * to delete, how, and that nothing is tried without a connection. An entry is never given up on:
 * a node goes only with its session, which outlives any expiry the cleaner could wait for.
 */
final class LeftoverNodes {

    /**
     * The most nodes waiting to be deleted. Generous, since a node left behind blocks its lock for
     * as long as the session lives: a suspension reports every held lease lost, and each lost
     * node is an entry (about 200 bytes).
     */
    static final int MAX_PENDING = 65_536;

    private static final Duration UNTIL_CLOSED = ChronoUnit.FOREVER.getDuration();

    private final CuratorFramework cf;
    private final Calls calls;
    private final BooleanSupplier connected;
    private final RetryingCleaner cleaner;
    private volatile long sweepKeepNanos;

    LeftoverNodes(CuratorFramework cf, Calls calls, BooleanSupplier connected, ThreadFactory threads,
                  long sweepKeepNanos) {
        this.cf = cf;
        this.calls = calls;
        this.connected = connected;
        this.sweepKeepNanos = sweepKeepNanos;
        this.cleaner = RetryingCleaner.start("ZooKeeper", threads,
                RetryingCleaner.Settings.defaults().withMaxPending(MAX_PENDING));
    }

    /** How long a sweep for a create of unknown outcome keeps looking: a late create may still land. */
    void sweepKeep(long nanos) {
        this.sweepKeepNanos = nanos;
    }

    /** Deletes a node, from now on. */
    void deletePath(String parent, String path) {
        cleaner.submit(path, () -> delete(path), Duration.ZERO, UNTIL_CLOSED);
    }

    /**
     * Deletes a node, but not before {@code delayMillis}: the node of a lease reported lost, which
     * the core releases itself once it has told the holder; this is the fallback.
     */
    void deletePathLater(String parent, String path, long delayMillis) {
        cleaner.submit(path, () -> delete(path), Duration.ofMillis(delayMillis), UNTIL_CLOSED);
    }

    /** Deletes every child of {@code parent} whose name starts with {@code nodePrefix}, from now on and for a while. */
    void sweep(String parent, String nodePrefix) {
        long since = System.nanoTime();
        cleaner.submit(parent + "/" + nodePrefix + "*", () -> sweepOnce(parent, nodePrefix, since), Duration.ZERO,
                UNTIL_CLOSED);
    }

    /** A node is gone; forget it. */
    void forget(String path) {
        cleaner.forget(path);
    }

    int size() {
        return cleaner.pending();
    }

    /** The connection is back: retry everything now. */
    void kick() {
        cleaner.kick();
    }

    private Outcome delete(String path) {
        if (calls.isClosed() || !connected.getAsBoolean()) {
            return Outcome.RETRY; // no request without a connection; a reconnection kicks
        }
        CompletableFuture<CuratorEvent> f = calls.start(cb -> cf.delete().inBackground(cb).forPath(path));
        KeeperException.Code code = Calls.code(calls.await(f, calls.deadline(), "delete of " + path, null));
        if (code == KeeperException.Code.OK || code == KeeperException.Code.NONODE) {
            return Outcome.DONE;
        }
        throw calls.failure("delete of " + path, null, code);
    }

    /** Done when nothing matched and the sweep is old enough that no late create can land. */
    private Outcome sweepOnce(String parent, String nodePrefix, long since) {
        if (calls.isClosed() || !connected.getAsBoolean()) {
            return Outcome.RETRY;
        }
        long deadline = calls.deadline();
        CompletableFuture<CuratorEvent> f = calls.start(cb -> cf.getChildren().inBackground(cb).forPath(parent));
        CuratorEvent ev = calls.await(f, deadline, "listing of " + parent, null);
        KeeperException.Code code = Calls.code(ev);
        boolean old = System.nanoTime() - since >= sweepKeepNanos;
        if (code == KeeperException.Code.NONODE) {
            return old ? Outcome.DONE : Outcome.RETRY;
        }
        if (code != KeeperException.Code.OK) {
            throw calls.failure("listing of " + parent, null, code);
        }
        List<CompletableFuture<CuratorEvent>> deletes = new ArrayList<>();
        for (String child : ev.getChildren()) {
            if (child.startsWith(nodePrefix)) {
                String path = parent + "/" + child;
                deletes.add(calls.start(cb -> cf.delete().inBackground(cb).forPath(path)));
            }
        }
        for (CompletableFuture<CuratorEvent> d : deletes) {
            KeeperException.Code dc = Calls.code(calls.await(d, deadline, "delete in " + parent, null));
            if (dc != KeeperException.Code.OK && dc != KeeperException.Code.NONODE) {
                throw calls.failure("delete in " + parent, null, dc);
            }
        }
        return deletes.isEmpty() && old ? Outcome.DONE : Outcome.RETRY;
    }

    /** Stops retrying; what is left goes with the session, which the caller is closing. */
    void close() {
        cleaner.close();
    }
}
