package io.dlock.internal;

import io.dlock.Capability;
import io.dlock.DistributedLock;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockHolder;
import io.dlock.LockListener;
import io.dlock.LockOptions;
import io.dlock.LostReason;
import io.dlock.Ticker;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.BackendUri;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The one {@link LockClient} implementation: the shared core around a {@link LockBackend}. */
public final class DefaultLockClient implements LockClient {

    private static final Logger LOG = LoggerFactory.getLogger(LockClient.class);
    private static final AtomicInteger CLIENT_IDS = new AtomicInteger();

    private final LockClientConfig config;
    private final Ticker ticker;
    private final LockListener listener;
    private final String providerName;
    private final BackendHandle<?> backend;
    private final Set<Capability> capabilities;
    private final Scheduler scheduler;
    /** Whether close() stops the scheduler: the client's own timer, or its tasks on the user's. */
    private final boolean ownsScheduler;
    private final Executor worker;
    private final Executor events;
    /** Where asynchronous acquisitions run their tries: the worker, at most {@link #ASYNC_TRIES} at once. */
    private final Lane acquireLane;
    /** The pools this client made, which close() stops (never the user's executor). */
    private final List<ExecutorService> ownedPools;
    private final LocalQueue queue = new LocalQueue();
    /** The acquisitions under way, which close() ends. */
    private final Set<Acquisition<?>> acquisitions = ConcurrentHashMap.newKeySet();
    /** The attempts of acquisitions that close() ended while they waited on the server: abandoned with its releases. */
    private final Queue<AcquireAttempt<?>> closeAbandons = new ConcurrentLinkedQueue<>();
    /** The held leases by owner id (unique per grant), which is how a backend names a lost one. */
    private final ConcurrentHashMap<String, DefaultLease<?>> held = new ConcurrentHashMap<>();
    /**
     * The owner ids of attempts in flight, each with the loss a backend reported for it before its
     * lease was registered (a grant the backend made but the core has not seen yet), if any.
     */
    private final ConcurrentHashMap<String, AtomicReference<LostReason>> attempting = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Lost leases whose best-effort release is due, sent by at most {@link #BACKGROUND_RELEASES} worker tasks. */
    private final Queue<DefaultLease<?>> backgroundReleases = new ConcurrentLinkedQueue<>();
    /**
     * Attempts whose last request failed and that are still to be abandoned, by the same worker
     * tasks as {@link #backgroundReleases}: the caller has had its exception at the operation
     * timeout and does not wait for the clean-up too.
     */
    private final Queue<AcquireAttempt<?>> backgroundAbandons = new ConcurrentLinkedQueue<>();
    private final AtomicInteger releaseDrainers = new AtomicInteger();

    /**
     * At most this many best-effort releases of lost leases, and abandons of attempts whose request
     * failed, run at once. When a backend stalls, thousands of leases can be lost together; each
     * release may then wait up to the operation timeout, and one worker thread per release would
     * mean a thread per lock and a burst of requests at a backend that is already in trouble.
     */
    static final int BACKGROUND_RELEASES = 4;

    /**
     * At most this many releases are in flight at once while {@link #close()} runs: its releases go
     * through this many worker tasks that share one deadline, so the threads a close needs do not
     * grow with the leases it holds, and a backend that answers still gets them all quickly.
     */
    static final int CLOSE_RELEASES = 16;

    /**
     * At most this many tries of asynchronous acquisitions run at once, on the worker; the others
     * wait in the client's lane, not on a thread. With the renewal passes (at most two) and the
     * background releases (at most {@link #BACKGROUND_RELEASES}) that makes {@link #WORKER_THREADS},
     * so tries never delay a renewal on the client's own worker.
     */
    static final int ASYNC_TRIES = 10;

    /**
     * The worker's threads: renewal passes (at most two at once), background releases (at most
     * {@link #BACKGROUND_RELEASES}), asynchronous acquisitions' tries (at most {@link #ASYNC_TRIES})
     * and close()'s {@link #CLOSE_RELEASES} senders. More tasks wait in its queue, whose length is
     * bounded by those limits, not by the number of locks or waiters.
     */
    static final int WORKER_THREADS = CLOSE_RELEASES;

    /**
     * The threads that run onLost listeners, one task per lost lease: a mass loss queues its
     * notifications rather than starting a thread per lease, and a slow listener delays other
     * listeners, never a renewal.
     */
    static final int EVENT_THREADS = 2;

    /**
     * Opens a client: starts its timer and worker threads (or uses the user's executor and
     * scheduler) and opens the backend.
     *
     * @param config the configuration
     * @param provider the backend's provider
     * @throws IllegalArgumentException if the URI is invalid for the provider
     * @throws io.dlock.LockBackendException if the backend connects eagerly and cannot
     */
    public DefaultLockClient(LockClientConfig config, LockProvider provider) {
        this(config, provider, null, null);
    }

    /** For tests: a scheduler and worker driven by the test, which close() leaves running. */
    DefaultLockClient(LockClientConfig config, LockProvider provider, Scheduler scheduler, ExecutorService worker) {
        this.config = Checks.notNull("config", config);
        Checks.notNull("provider", provider);
        this.ticker = config.ticker();
        this.listener = SafeListener.forClient(config.listener(), provider.name());
        this.providerName = provider.name();
        String prefix = "dlock-" + CLIENT_IDS.incrementAndGet() + "-";
        List<ExecutorService> owned = new ArrayList<>();
        if (scheduler != null) {
            this.scheduler = scheduler;
            this.ownsScheduler = false;
        } else {
            this.scheduler = config.scheduler().map(ExecutorScheduler::new)
                    .orElseGet(() -> new ExecutorScheduler(threads(prefix + "timer")));
            this.ownsScheduler = true;
        }
        Optional<Executor> supplied = config.executor();
        if (worker != null) {
            this.worker = worker;
            this.events = worker;
        } else if (supplied.isPresent()) {
            this.worker = supplied.get();
            this.events = new Lane(supplied.get(), EVENT_THREADS);
        } else {
            ExecutorService w = bounded(WORKER_THREADS, threads(prefix + "worker"));
            ExecutorService e = bounded(EVENT_THREADS, threads(prefix + "events"));
            owned.add(w);
            owned.add(e);
            this.worker = w;
            this.events = e;
        }
        this.ownedPools = List.copyOf(owned);
        this.acquireLane = new Lane(this.worker, ASYNC_TRIES);
        BackendUri uri = BackendUri.parse(config.uri());
        BackendContext context = new BackendContext(config, uri, threads(prefix + provider.name()), new Events());
        LockBackend<?> opened;
        try {
            opened = provider.open(context);
            if (opened == null) {
                throw new IllegalStateException("the " + provider.name() + " provider opened no backend (null)");
            }
        } catch (RuntimeException | Error e) {
            shutdownExecutors();
            throw e;
        }
        this.backend = BackendHandle.of(opened, ticker, this.scheduler, this.worker);
        Set<Capability> caps = EnumSet.noneOf(Capability.class);
        caps.addAll(opened.capabilities());
        this.capabilities = Collections.unmodifiableSet(caps);
    }

    /** @return a pool of {@code n} threads that end when idle for 30 s, with a queue for the tasks that wait */
    private static ThreadPoolExecutor bounded(int n, ThreadFactory threads) {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(n, n, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), threads);
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    private static ThreadFactory threads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    @Override
    public DistributedLock lock(String name) {
        return lock(name, config.defaultLockOptions());
    }

    @Override
    public DistributedLock lock(String name, LockOptions options) {
        Names.validate(name);
        Checks.notNull("options", options);
        ensureOpen();
        checkLeaseTime(options.leaseTime());
        return new DefaultDistributedLock(this, name, options);
    }

    /**
     * Checks a lease time against the backend's bounds, when a lock handle is made and again when
     * each acquire starts: a backend's maximum can shrink meanwhile (ZooKeeper negotiates its
     * session timeout, which bounds leases, on every connection).
     *
     * @throws IllegalArgumentException naming leaseTime, if the backend does not allow it
     */
    void checkLeaseTime(Duration leaseTime) {
        LockBackend<?> b = backend.backend();
        if (leaseTime.compareTo(b.minimumLeaseTime()) < 0) {
            throw new IllegalArgumentException("leaseTime must be at least " + b.minimumLeaseTime()
                    + " for the " + providerName + " backend, was " + leaseTime);
        }
        if (leaseTime.compareTo(b.maximumLeaseTime()) > 0) {
            throw new IllegalArgumentException("leaseTime must be at most " + b.maximumLeaseTime()
                    + " for the " + providerName + " backend, was " + leaseTime);
        }
    }

    @Override
    public Optional<LockHolder> holder(String name) {
        Names.validate(name);
        ensureOpen();
        if (!capabilities.contains(Capability.HOLDER_QUERY)) {
            throw new UnsupportedOperationException("the " + providerName + " backend cannot tell who holds a lock");
        }
        return backend.backend().holder(name);
    }

    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    @Override
    public LockClientConfig config() {
        return config;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        long deadline = System.nanoTime() + Checks.saturatedNanos(config.operationTimeout());
        backend.renewer().stop();
        // waiting acquisitions end now (IllegalStateException); those waiting on the server leave their
        // attempts to abandon with the releases below; one in a try ends when its try returns
        for (Acquisition<?> a : new ArrayList<>(acquisitions)) {
            a.stop(Acquisition.Stop.CLOSED);
        }
        // every holder learns at once; only the requests to the server take time
        Queue<DefaultLease<?>> releases = new ConcurrentLinkedQueue<>();
        for (DefaultLease<?> lease : new ArrayList<>(held.values())) {
            if (lease.releaseLocally()) {
                releases.add(lease);
            }
        }
        DefaultLease<?> lost;
        while ((lost = backgroundReleases.poll()) != null) {
            releases.add(lost); // lost leases still queued for their best-effort release share the deadline
        }
        Queue<AcquireAttempt<?>> abandons = new ConcurrentLinkedQueue<>();
        AcquireAttempt<?> failed;
        while ((failed = backgroundAbandons.poll()) != null) {
            abandons.add(failed); // so do the clean-ups of failed attempts, after the releases
        }
        while ((failed = closeAbandons.poll()) != null) {
            abandons.add(failed); // and of the attempts that waited on the server
        }
        sendReleases(releases, abandons, deadline);
        shutdownExecutors();
        // an asynchronous acquisition whose step the worker's shutdown dropped ends here
        for (Acquisition<?> a : new ArrayList<>(acquisitions)) {
            a.abortAtClose();
        }
        try {
            backend.backend().close();
        } catch (RuntimeException e) {
            LOG.warn("dlock: closing the {} backend failed", providerName, e);
        }
    }

    /**
     * Sends close()'s releases, then the abandons still queued, through at most
     * {@link #CLOSE_RELEASES} worker tasks that share one deadline, and waits for them until the
     * deadline. A task takes no new request once the deadline has passed; what is then unsent or
     * unanswered is given up (the server frees those locks when their leases end), and a task still
     * waiting for an answer is interrupted by the executors' shutdown that follows.
     *
     * @param releases the leases whose release must be sent; drained
     * @param abandons the attempts still to be abandoned; drained
     * @param deadline the {@link System#nanoTime()} reading after which nothing more is sent
     */
    private void sendReleases(Queue<DefaultLease<?>> releases, Queue<AcquireAttempt<?>> abandons, long deadline) {
        int total = releases.size();
        if (total == 0 && abandons.isEmpty()) {
            return;
        }
        AtomicInteger answered = new AtomicInteger();
        int senders = Math.min(CLOSE_RELEASES, total + abandons.size());
        CountDownLatch done = new CountDownLatch(senders);
        Runnable sender = () -> {
            try {
                while (System.nanoTime() - deadline < 0) {
                    DefaultLease<?> lease = releases.poll();
                    if (lease != null) {
                        if (lease.sendRelease()) {
                            answered.incrementAndGet();
                        }
                        continue;
                    }
                    AcquireAttempt<?> attempt = abandons.poll();
                    if (attempt == null) {
                        break;
                    }
                    abandon(attempt);
                }
            } finally {
                done.countDown();
            }
        };
        for (int i = 0; i < senders; i++) {
            try {
                worker.execute(sender);
            } catch (RejectedExecutionException e) {
                done.countDown(); // the test worker was shut down: the other senders take its share
            }
        }
        boolean interrupted = false;
        boolean finished = false;
        while (!finished) {
            try {
                // bounded by the deadline, so the wait does not give in to an interrupt: a close on an
                // interrupted thread still frees the locks
                finished = done.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)
                        || System.nanoTime() - deadline >= 0;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        releases.clear(); // senders between two requests take no more
        abandons.clear();
        int unanswered = total - answered.get();
        if (unanswered > 0) {
            LOG.warn("dlock: close() gave up on {} of {} release request(s): they failed, or were not sent or not "
                    + "answered within the operation timeout ({}); the server frees those locks when their leases end",
                    unanswered, total, config.operationTimeout());
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops the timer and the pools this client made, and waits a while for their threads; never the user's. */
    private void shutdownExecutors() {
        if (ownsScheduler) {
            scheduler.shutdown();
        }
        for (ExecutorService pool : ownedPools) {
            pool.shutdownNow();
        }
        try {
            long wait = Checks.saturatedNanos(config.operationTimeout());
            long deadline = System.nanoTime() + wait;
            for (ExecutorService pool : ownedPools) {
                if (!pool.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    LOG.warn("dlock: worker threads still running after close");
                    break;
                }
            }
            if (ownsScheduler && scheduler instanceof ExecutorScheduler) {
                ((ExecutorScheduler) scheduler).awaitTermination(wait);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "LockClient{" + providerName + ", " + BackendUri.redact(config.uri()) + (closed.get() ? ", closed" : "") + "}";
    }

    // ---- for the core ----

    void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("the lock client is closed");
        }
    }

    boolean isClosed() {
        return closed.get();
    }

    Ticker ticker() {
        return ticker;
    }

    LockListener listener() {
        return listener;
    }

    /** @return the backend, with its state type captured */
    BackendHandle<?> backendHandle() {
        return backend;
    }

    Scheduler scheduler() {
        return scheduler;
    }

    Renewer<?> renewer() {
        return backend.renewer();
    }

    LocalQueue queue() {
        return queue;
    }

    /** @return where asynchronous acquisitions run their steps: the worker, a bounded number at once */
    Lane acquireLane() {
        return acquireLane;
    }

    /** An acquisition starts; if the client is closed already, it ends at once. */
    void acquisitionStarted(Acquisition<?> a) {
        acquisitions.add(a);
        if (closed.get()) {
            a.stop(Acquisition.Stop.CLOSED);
        }
    }

    /** An acquisition ended. */
    void acquisitionEnded(Acquisition<?> a) {
        acquisitions.remove(a);
    }

    /** @return the acquisitions under way (for tests) */
    int acquisitionCount() {
        return acquisitions.size();
    }

    /**
     * Leaves the abandon of an attempt whose acquisition close() ended while it waited on the
     * server to close(), which sends it with its releases under its deadline.
     */
    void abandonAtClose(AcquireAttempt<?> attempt) {
        closeAbandons.add(attempt);
    }

    int heldCount() {
        return held.size();
    }

    /**
     * Queues the best-effort release of a lost lease; at most {@link #BACKGROUND_RELEASES} run at
     * once, on worker threads, in the order they were queued. Once the client closes, the queue
     * goes to {@link #close()}'s releases and nothing more is queued.
     *
     * @param lease the lost lease
     */
    void releaseInBackground(DefaultLease<?> lease) {
        if (closed.get()) {
            return; // close() took the queue; this one ends by expiry on the server
        }
        backgroundReleases.add(lease);
        startReleaseDrainer();
    }

    /**
     * Abandons an attempt whose last request failed, off the caller's thread: queued, and run by
     * the worker tasks that send the best-effort releases (at most {@link #BACKGROUND_RELEASES}
     * at once). A backend spends up to its abandon budget trying to undo such an attempt at once,
     * which the caller, who has had its exception at the operation timeout, need not wait for.
     * Once the client is closing the attempt is abandoned on the caller's thread.
     *
     * @param attempt the attempt
     */
    void abandonInBackground(AcquireAttempt<?> attempt) {
        if (closed.get()) {
            abandon(attempt);
            return;
        }
        backgroundAbandons.add(attempt);
        startReleaseDrainer();
        if (closed.get() && backgroundAbandons.remove(attempt)) {
            abandon(attempt); // close() took the queue before this one arrived
        }
    }

    /** Abandons an attempt, with the interrupt flag cleared (restored afterwards); never throws. */
    static void abandon(AcquireAttempt<?> attempt) {
        DefaultDistributedLock.withoutInterrupt(() -> {
            try {
                attempt.abandon();
            } catch (RuntimeException e) {
                LOG.warn("dlock: abandoning an acquire attempt failed unexpectedly; a grant it may have left ends "
                        + "by expiry", e);
            }
        });
    }

    private void startReleaseDrainer() {
        while ((!backgroundReleases.isEmpty() || !backgroundAbandons.isEmpty()) && !closed.get()) {
            int running = releaseDrainers.get();
            if (running >= BACKGROUND_RELEASES) {
                return; // a running drainer takes it
            }
            if (releaseDrainers.compareAndSet(running, running + 1)) {
                runAsync(this::drainReleases);
                return;
            }
        }
    }

    private void drainReleases() {
        try {
            while (!closed.get()) {
                AcquireAttempt<?> attempt = backgroundAbandons.poll();
                if (attempt != null) {
                    abandon(attempt);
                    continue;
                }
                DefaultLease<?> lease = backgroundReleases.poll();
                if (lease == null) {
                    break;
                }
                lease.sendRelease();
            }
        } finally {
            releaseDrainers.decrementAndGet();
            startReleaseDrainer(); // one queued after the last poll, before the decrement
        }
    }

    /** Runs a task on the worker; if the client is closing, runs it on the caller. */
    void runAsync(Runnable task) {
        try {
            worker.execute(task);
        } catch (RejectedExecutionException e) {
            task.run();
        }
    }

    /** Runs listener notifications on the event threads; if the client is closing, on the caller. */
    void dispatch(Runnable task) {
        try {
            events.execute(task);
        } catch (RejectedExecutionException e) {
            task.run();
        }
    }

    /** Registers a granted lease: renewal, expiry timer. The slot permit now belongs to it. */
    DefaultLease<?> register(DefaultLease<?> lease) {
        held.put(lease.ownerId(), lease);
        AtomicReference<LostReason> early = attempting.remove(lease.ownerId());
        lease.start();
        LostReason lostEarly = early == null ? null : early.get();
        if (lostEarly != null) {
            lease.lost(lostEarly); // the backend reported the grant lost before the core had it
        }
        if (closed.get()) {
            lease.release();
            throw new IllegalStateException("the lock client is closed");
        }
        return lease;
    }

    /**
     * An attempt with this owner id starts: a loss the backend reports for it before its lease is
     * registered is kept for {@link #register}.
     */
    void attemptStarted(String ownerId) {
        attempting.put(ownerId, new AtomicReference<>());
    }

    /** An attempt ended without a lease. */
    void attemptEnded(String ownerId) {
        attempting.remove(ownerId);
    }

    /** A lease ended (released or lost): pass its local slot to the next local waiter. */
    void leaseEnded(DefaultLease<?> lease) {
        if (held.remove(lease.ownerId(), lease)) {
            queue.release(lease.slot);
        }
    }

    private final class Events implements BackendEvents {
        @Override
        public void allLeasesLost(LostReason reason) {
            // every lease is marked first, then told: no listener sees another lease of this loss still valid
            List<Runnable> rest = new ArrayList<>();
            for (DefaultLease<?> lease : new ArrayList<>(held.values())) {
                Runnable r = lease.markLost(reason);
                if (r != null) {
                    rest.add(r);
                }
            }
            rest.forEach(Runnable::run);
        }

        @Override
        public void leaseLost(String ownerId, LostReason reason) {
            if (ownerId == null || reason == null) {
                return;
            }
            DefaultLease<?> lease = held.get(ownerId);
            if (lease == null) {
                // not registered yet: keep the loss for register(), then look again in case the
                // lease was registered meanwhile (lost() is idempotent)
                AtomicReference<LostReason> early = attempting.get(ownerId);
                if (early != null) {
                    early.compareAndSet(null, reason);
                }
                lease = held.get(ownerId);
            }
            if (lease != null) {
                lease.lost(reason);
            }
        }
    }
}
