package io.dlock.zookeeper.internal;

import io.dlock.LockBackendException;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition: a place in the lock's queue. The first {@link #tryOnce()} creates the
 * ephemeral sequential node (its creation zxid, read from the create's answer, is the token if it
 * wins) and lists the queue in the same round trip (the listing is sent right behind the create;
 * see {@code createAndList}); later calls list the queue after a pipelined {@code sync}, also one
 * round trip. A call grants if our node is first. {@link #turn}
 * watches only the immediate predecessor, so a release wakes one waiter, not the herd; the
 * watch's event (on Curator's event thread) completes the turn's stage, and no thread waits.
 * {@link #abandon()} deletes the node. The core's calls come one at a time.
 *
 * <p>Once queued, an attempt rides out a connection outage (a leader failover, say) as long as the
 * session, and with it the node, may survive: a listing that gets no answer is reported busy, not
 * as a failure, until the connection has been suspended for a session timeout. Nothing is granted
 * without an answer, and a grant is refused if the connection was suspended while it was being
 * decided. A first attempt whose create gets no answer fails at once, as the contract asks.
 */
final class ZkAttempt implements AcquireAttempt<ZkGrant> {

    private static final Logger LOG = LoggerFactory.getLogger(ZkAttempt.class);

    private final ZkBackend b;
    private final AcquireRequest request;
    private final String parent;
    private final String nodePrefix;
    private final Watcher watcher = event -> wake();
    /** The current turn's stage: a watch event or a connection change completes it. */
    private volatile CompletableFuture<Void> turnStage;
    /** The read that set the current watch, while its answer is outstanding. */
    private CompletableFuture<CuratorEvent> watchRead;
    private String path; // our node, once created
    private long czxid;
    private boolean createUncertain; // a create was sent and its answer never came
    private String predecessor; // the node we wait for, after a busy answer
    private String watched; // where our watcher is registered
    private volatile boolean abandoned;

    ZkAttempt(ZkBackend backend, AcquireRequest request) {
        this.b = backend;
        this.request = request;
        this.parent = backend.parentPath(request.name());
        this.nodePrefix = LockNode.namePrefix(request.ownerId());
    }

    @Override
    public AttemptResult<ZkGrant> tryOnce() {
        String name = request.name();
        b.ensureOpen(name);
        b.checkLease(request.leaseTime()); // a reconnection may have negotiated a shorter session
        b.attemptStarted(this);
        long epochAtStart = b.epoch();
        long deadline = b.calls.deadline();
        List<String> children;
        if (path == null) {
            children = createAndList(deadline);
        } else {
            try {
                children = list(deadline, true);
            } catch (ConnectionTrouble e) {
                if (!b.sessionMayBeAlive()) {
                    throw e;
                }
                // no answer (a server failover, a stalled network), but the session, and with it our place
                // in the queue, may survive: keep waiting, within the caller's deadline. A read failed, so
                // nothing was granted; the node is deleted if the caller gives up.
                LOG.debug("dlock: lock '{}': no answer from ZooKeeper ({}); keeping the queued node {}", name,
                        e.getMessage(), path);
                predecessor = null;
                return AttemptResult.busy();
            }
            if (!children.contains(ZkBackend.nodeOf(path))) {
                // our node is gone: the session that owned it ended; queue again
                LOG.debug("dlock: lock node {} vanished (session ended); queueing again", path);
                path = null;
                children = createAndList(deadline);
            }
        }
        String mine = ZkBackend.nodeOf(path);
        List<LockNode> queue = LockNode.queue(children);
        LockNode previous = null;
        boolean found = false;
        for (LockNode node : queue) {
            if (node.name.equals(mine)) {
                found = true;
            } else if (node.name.startsWith(nodePrefix)) {
                // a second node of ours: it cannot happen without retries, but never wait for ourselves,
                // and never leave one behind to block the queue after we release
                b.leftovers.deletePath(parent, parent + "/" + node.name);
            } else if (!found) {
                previous = node;
            }
        }
        if (!found) {
            // the listing did not show the node we just created: the session changed under us
            throw new LockBackendException("the ZooKeeper session changed during an acquire attempt", name, null);
        }
        if (previous == null) {
            ZkGrant grant = new ZkGrant(name, path, czxid, epochAtStart);
            if (b.recordGrant(grant, epochAtStart)) {
                predecessor = null;
                b.attemptEnded(this);
                return AttemptResult.granted(czxid, grant);
            }
            // the connection was suspended meanwhile: a grant now could be reported lost already; look again
            predecessor = null;
            return AttemptResult.busy(Duration.ZERO);
        }
        predecessor = parent + "/" + previous.name;
        return AttemptResult.busy();
    }

    /**
     * Creates our node and lists the queue in one round trip: the create and the {@code getChildren}
     * are sent back to back without waiting. ZooKeeper runs one session's requests in the order they
     * were sent, and a server answers a read of a session only after it has applied that session's
     * earlier writes, so the listing normally shows our new node, as a listing sent after the
     * create's answer would. Where it does not (Curator held the create back across a reconnection,
     * so the listing overtook it), the queue is listed again.
     *
     * <p>A create that fails with {@code NONODE} (the per-name parent does not exist: a name never
     * used, or a container the server removed once its last node was gone) is sent again with a
     * create of every missing ancestor in front of it (container nodes; {@code NODEEXISTS} is fine),
     * again in one round trip. A create that gets no answer, or a connection-loss answer, may
     * still have landed: {@link #abandon()} then has the parent swept for our owner id.
     *
     * @return the children of the parent, our node among them
     */
    private List<String> createAndList(long deadline) {
        String name = request.name();
        byte[] data = request.ownerId().getBytes(StandardCharsets.UTF_8);
        String nodePath = parent + "/" + nodePrefix;
        List<CompletableFuture<CuratorEvent>> ancestors = List.of();
        for (int round = 0; ; round++) {
            CompletableFuture<CuratorEvent> created = b.calls.start(cb -> b.cf.create()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .inBackground(cb)
                    .forPath(nodePath, data));
            CompletableFuture<CuratorEvent> listed = b.calls.start(cb -> b.cf.getChildren().inBackground(cb).forPath(parent));
            CuratorEvent e;
            try {
                e = b.calls.await(created, deadline, "create", name);
            } catch (LockBackendException ex) {
                createUncertain = true;
                b.calls.forget(listed);
                forgetAll(ancestors);
                throw ex;
            }
            KeeperException.Code code = Calls.code(e);
            if (code == KeeperException.Code.NONODE) {
                // nothing was created; the listing (NONODE too) tells nothing
                b.calls.forget(listed);
                KeeperException.Code why = ancestorFailure(ancestors, deadline);
                if (why != null) {
                    throw b.calls.failure("create", name, why);
                }
                if (round >= 3) {
                    throw new LockBackendException("ZooKeeper create failed: NONODE (the lock's parent node "
                            + parent + " vanished " + (round + 1) + " times in a row)", name, null);
                }
                ancestors = createAncestors();
                continue;
            }
            forgetAll(ancestors); // answered before the create was: nothing more to learn from them
            if (code != KeeperException.Code.OK) {
                b.calls.forget(listed);
                if (code != KeeperException.Code.NOAUTH && code != KeeperException.Code.INVALIDACL
                        && code != KeeperException.Code.BADARGUMENTS) {
                    createUncertain = true;
                }
                throw b.calls.failure("create", name, code);
            }
            String createdName = e.getName() != null ? e.getName() : e.getPath();
            path = parent + "/" + ZkBackend.nodeOf(createdName);
            Stat stat = e.getStat();
            if (stat != null && stat.getCzxid() > 0) {
                czxid = stat.getCzxid();
            } else {
                b.calls.forget(listed);
                CuratorEvent exists = b.calls.awaitOk(b.calls.start(cb -> b.cf.checkExists().inBackground(cb).forPath(path)),
                        deadline, "read of the new lock node", name);
                if (exists.getStat() == null) {
                    throw new LockBackendException("the new lock node vanished at once", name, null);
                }
                czxid = exists.getStat().getCzxid();
                return list(deadline, false);
            }
            List<String> children = answer(listed, deadline);
            if (!children.contains(ZkBackend.nodeOf(path))) {
                // the listing overtook the create (see above): list again, now that the create was answered
                children = list(deadline, false);
            }
            return children;
        }
    }

    /**
     * Sends a create of every ancestor of the parent, top down, as container nodes (the server
     * removes them once they are empty), without waiting: the next create queues behind them.
     */
    private List<CompletableFuture<CuratorEvent>> createAncestors() {
        List<CompletableFuture<CuratorEvent>> out = new ArrayList<>();
        for (int i = parent.indexOf('/', 1); ; i = parent.indexOf('/', i + 1)) {
            String p = i < 0 ? parent : parent.substring(0, i);
            out.add(b.calls.start(cb -> b.cf.create().withMode(CreateMode.CONTAINER).inBackground(cb).forPath(p)));
            if (i < 0) {
                return out;
            }
        }
    }

    private void forgetAll(List<CompletableFuture<CuratorEvent>> futures) {
        for (CompletableFuture<CuratorEvent> f : futures) {
            b.calls.forget(f);
        }
    }

    /** @return the first failure among ancestor creates other than NODEEXISTS, or null */
    private KeeperException.Code ancestorFailure(List<CompletableFuture<CuratorEvent>> ancestors, long deadline) {
        KeeperException.Code failure = null;
        for (CompletableFuture<CuratorEvent> f : ancestors) {
            if (failure != null) {
                b.calls.forget(f);
                continue;
            }
            KeeperException.Code code = Calls.code(b.calls.await(f, deadline, "create of a parent node", request.name()));
            if (code != KeeperException.Code.OK && code != KeeperException.Code.NODEEXISTS
                    && code != KeeperException.Code.NONODE) {
                failure = code;
            }
        }
        return failure;
    }

    /** Lists the queue; after a {@code sync} when {@code fresh}, so the answer is not behind the leader. */
    private List<String> list(long deadline, boolean fresh) {
        String name = request.name();
        CompletableFuture<CuratorEvent> sync = fresh ? b.calls.start(cb -> b.cf.sync().inBackground(cb).forPath(parent)) : null;
        CompletableFuture<CuratorEvent> f = b.calls.start(cb -> b.cf.getChildren().inBackground(cb).forPath(parent));
        if (sync != null) {
            KeeperException.Code code;
            try {
                code = Calls.code(b.calls.await(sync, deadline, "sync", name));
            } catch (LockBackendException e) {
                b.calls.forget(f);
                throw e;
            }
            if (code != KeeperException.Code.OK && code != KeeperException.Code.NONODE) {
                b.calls.forget(f);
                throw b.calls.failure("sync", name, code);
            }
        }
        return answer(f, deadline);
    }

    /** Waits for a listing's answer; an absent parent is an empty queue. */
    private List<String> answer(CompletableFuture<CuratorEvent> f, long deadline) {
        String name = request.name();
        CuratorEvent e = b.calls.await(f, deadline, "listing", name);
        KeeperException.Code code = Calls.code(e);
        if (code == KeeperException.Code.NONODE) {
            return List.of();
        }
        if (code != KeeperException.Code.OK) {
            throw b.calls.failure("listing", name, code);
        }
        return e.getChildren();
    }

    @Override
    public CompletionStage<Void> turn(Duration maxWait) {
        CompletableFuture<Void> stage = new CompletableFuture<>();
        CompletableFuture<Void> previous = turnStage;
        turnStage = stage; // published first: a wake from here on completes this one
        if (previous != null) {
            previous.complete(null); // stale: the core moved on from it
        }
        forgetWatchRead();
        String pred = predecessor;
        if (abandoned || b.calls.isClosed()) {
            stage.complete(null);
            return stage;
        }
        if (pred == null) {
            // riding out a suspension: the reconnection completes the stage (wake()); connected: try now
            if (b.isConnected()) {
                stage.complete(null);
            }
            return stage;
        }
        // getData rather than exists: on a node that is already gone it sets no watch (exists would
        // leave one waiting for a creation that never comes, as lock node paths are never reused)
        CompletableFuture<CuratorEvent> f = b.calls.start(cb -> b.cf.getData().usingWatcher(watcher)
                .inBackground(cb).forPath(pred));
        watched = pred;
        watchRead = f;
        f.whenComplete((e, t) -> {
            if (t != null || Calls.code(e) != KeeperException.Code.OK || e.getStat() == null) {
                stage.complete(null); // the predecessor is gone already, or the check failed: try again now
            }
        });
        return stage;
    }

    /** Drops the last watch-setting read from the calls in flight; its answer no longer matters. */
    private void forgetWatchRead() {
        CompletableFuture<CuratorEvent> f = watchRead;
        if (f != null) {
            watchRead = null;
            b.calls.forget(f);
        }
    }

    /** Completes the current turn's stage: the watched node changed, or the connection did. */
    void wake() {
        CompletableFuture<Void> stage = turnStage;
        if (stage != null) {
            stage.complete(null);
        }
    }

    @Override
    public void abandon() {
        abandoned = true;
        wake();
        forgetWatchRead();
        b.attemptEnded(this);
        try {
            removeWatch();
            if (createUncertain) {
                b.leftovers.sweep(parent, nodePrefix);
            }
            if (path == null) {
                return;
            }
            String node = path;
            if (b.calls.isClosed()) {
                return; // closing the session deletes it
            }
            KeeperException.Code code;
            try {
                code = Calls.code(b.calls.await(b.calls.start(cb -> b.cf.delete().inBackground(cb).forPath(node)),
                        b.calls.deadline(), "delete", request.name()));
            } catch (LockBackendException e) {
                code = null;
            }
            if (code != KeeperException.Code.OK && code != KeeperException.Code.NONODE) {
                LOG.debug("dlock: could not delete abandoned lock node {} ({}); will retry", node, code);
                b.leftovers.deletePath(parent, node);
            }
        } catch (RuntimeException e) {
            LOG.warn("dlock: abandoning an acquire attempt on lock '{}' failed", request.name(), e);
            if (path != null) {
                b.leftovers.deletePath(parent, path);
            }
        }
    }

    private void removeWatch() {
        String w = watched;
        if (w == null || b.calls.isClosed()) {
            return;
        }
        try {
            b.cf.watchers().remove(watcher).ofType(Watcher.WatcherType.Any).locally().quietly().inBackground().forPath(w);
        } catch (Exception e) {
            LOG.debug("dlock: could not remove a watch on {}", w, e);
        }
    }
}
