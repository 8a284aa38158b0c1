package io.dlock.zookeeper.internal;

import io.dlock.LockBackendException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes lock nodes this client no longer wants but could not delete at the time: the nodes of
 * leases reported lost while the connection was suspended, releases and abandons that failed, and
 * creates whose outcome was unknown. A lock node is ephemeral, so it would otherwise stay (and
 * block the lock) for as long as the session lives. Runs on one thread of the client's factory
 * that exists only while there is work, retries every second while connected, and is kicked on
 * every reconnection.
 */
final class Janitor {

    private static final Logger LOG = LoggerFactory.getLogger(Janitor.class);
    private static final long RETRY_MILLIS = 1000;

    /** One thing to delete: an exact path, or every child of a parent whose name starts with a prefix. */
    private static final class Entry {
        final String parent;
        final String path; // null for a sweep
        final String nodePrefix; // for a sweep
        final long since = System.nanoTime();
        final long notBefore;

        Entry(String parent, String path, String nodePrefix, long delayNanos) {
            this.parent = parent;
            this.path = path;
            this.nodePrefix = nodePrefix;
            this.notBefore = since + delayNanos;
        }
    }

    private final CuratorFramework cf;
    private final Calls calls;
    private final BooleanSupplier connected;
    private final ScheduledThreadPoolExecutor exec;
    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private volatile long sweepKeepNanos;

    Janitor(CuratorFramework cf, Calls calls, BooleanSupplier connected, ThreadFactory threads, long sweepKeepNanos) {
        this.cf = cf;
        this.calls = calls;
        this.connected = connected;
        this.sweepKeepNanos = sweepKeepNanos;
        this.exec = new ScheduledThreadPoolExecutor(1, threads);
        this.exec.setKeepAliveTime(5, TimeUnit.SECONDS);
        this.exec.allowCoreThreadTimeOut(true);
        this.exec.setRemoveOnCancelPolicy(true);
        this.exec.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** How long a sweep for a create of unknown outcome keeps looking: a late create may still land. */
    void sweepKeep(long nanos) {
        this.sweepKeepNanos = nanos;
    }

    /** Deletes a node, later. */
    void deletePath(String parent, String path) {
        entries.put(path, new Entry(parent, path, null, 0));
        kick(0);
    }

    /**
     * Deletes a node, but not before {@code delayMillis}: the node of a lease reported lost, which
     * the core releases itself once it has told the holder; this is the fallback.
     */
    void deletePathLater(String parent, String path, long delayMillis) {
        entries.putIfAbsent(path, new Entry(parent, path, null, TimeUnit.MILLISECONDS.toNanos(delayMillis)));
        kick(delayMillis);
    }

    /** Deletes every child of {@code parent} whose name starts with {@code nodePrefix}, later and for a while. */
    void sweep(String parent, String nodePrefix) {
        entries.put(parent + "/" + nodePrefix + "*", new Entry(parent, null, nodePrefix, 0));
        kick(0);
    }

    /** A node is gone; forget it. */
    void forget(String path) {
        entries.remove(path);
    }

    int size() {
        return entries.size();
    }

    /** Runs soon, if there is work. */
    void kick(long delayMillis) {
        if (entries.isEmpty() || calls.isClosed() || !scheduled.compareAndSet(false, true)) {
            return;
        }
        try {
            exec.schedule(this::run, delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            scheduled.set(false);
        }
    }

    private void run() {
        scheduled.set(false);
        if (calls.isClosed()) {
            return;
        }
        if (connected.getAsBoolean()) {
            for (Entry e : new ArrayList<>(entries.values())) {
                if (calls.isClosed()) {
                    return;
                }
                if (System.nanoTime() - e.notBefore < 0) {
                    continue;
                }
                try {
                    if (e.path != null ? delete(e) : sweepOnce(e)) {
                        entries.remove(e.path != null ? e.path : e.parent + "/" + e.nodePrefix + "*", e);
                    }
                } catch (LockBackendException ex) {
                    LOG.debug("dlock: ZooKeeper clean-up of {} failed, will retry: {}", e.path != null ? e.path : e.parent,
                            ex.getMessage());
                } catch (RuntimeException ex) {
                    LOG.warn("dlock: ZooKeeper clean-up of {} failed unexpectedly", e.path != null ? e.path : e.parent, ex);
                }
            }
        }
        if (!entries.isEmpty() && connected.getAsBoolean()) {
            kick(RETRY_MILLIS);
        }
    }

    /** @return true when the node is gone */
    private boolean delete(Entry e) {
        CompletableFuture<CuratorEvent> f = calls.start(cb -> cf.delete().inBackground(cb).forPath(e.path));
        KeeperException.Code code = Calls.code(calls.await(f, calls.deadline(), "delete of " + e.path, null));
        if (code == KeeperException.Code.OK || code == KeeperException.Code.NONODE) {
            return true;
        }
        throw calls.failure("delete of " + e.path, null, code);
    }

    /** @return true when nothing matched and the sweep is old enough that no late create can land */
    private boolean sweepOnce(Entry e) {
        long deadline = calls.deadline();
        CompletableFuture<CuratorEvent> f = calls.start(cb -> cf.getChildren().inBackground(cb).forPath(e.parent));
        CuratorEvent ev = calls.await(f, deadline, "listing of " + e.parent, null);
        KeeperException.Code code = Calls.code(ev);
        boolean old = System.nanoTime() - e.since >= sweepKeepNanos;
        if (code == KeeperException.Code.NONODE) {
            return old;
        }
        if (code != KeeperException.Code.OK) {
            throw calls.failure("listing of " + e.parent, null, code);
        }
        List<CompletableFuture<CuratorEvent>> deletes = new ArrayList<>();
        for (String child : ev.getChildren()) {
            if (child.startsWith(e.nodePrefix)) {
                String path = e.parent + "/" + child;
                deletes.add(calls.start(cb -> cf.delete().inBackground(cb).forPath(path)));
            }
        }
        for (CompletableFuture<CuratorEvent> d : deletes) {
            KeeperException.Code dc = Calls.code(calls.await(d, deadline, "delete in " + e.parent, null));
            if (dc != KeeperException.Code.OK && dc != KeeperException.Code.NONODE) {
                throw calls.failure("delete in " + e.parent, null, dc);
            }
        }
        return deletes.isEmpty() && old;
    }

    /** Stops the thread; what is left goes with the session, which the caller is closing. */
    void close() {
        exec.shutdownNow();
        try {
            if (!exec.awaitTermination(calls.timeout().toMillis() + 1000, TimeUnit.MILLISECONDS)) {
                LOG.warn("dlock: the ZooKeeper clean-up thread did not stop");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
