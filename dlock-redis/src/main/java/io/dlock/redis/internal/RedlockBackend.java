package io.dlock.redis.internal;

import io.dlock.Capability;
import io.dlock.LockBackendException;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.LockHolder;
import io.dlock.Ticker;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendUri;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.RenewOutcome;
import io.dlock.spi.support.LeaseTimes;
import io.dlock.spi.support.RetryingCleaner;
import io.dlock.spi.support.RetryingCleaner.Outcome;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocketFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;

/**
 * The Redlock {@link LockBackend} of {@code redlock://} and {@code redlocks://}: N ≥ 3 independent
 * Redis primaries, each with the flat keys of {@code redis://} and its own lock-delay marker; a
 * lock is held while a majority q = N/2+1 holds its key. The fencing token comes from a quorum
 * counter: phase 1 sets the key on every node it can and each granting node answers max(its
 * counter, its TIME in µs); the token is the largest answer of the granting majority plus one;
 * phase 2 writes it into the key and raises each granting node's counter to it, only where the key
 * is still this round's. docs/ARCHITECTURE.md ("Redlock") has the argument why tokens strictly
 * increase in hold order and the assumptions it takes.
 *
 * <p>Calls to the nodes go out in parallel, each on its node's executor (at most {@code poolSize}
 * threads per node, made by the client's thread factory and ended when idle), and the caller
 * waits only until the answers in decide: a frozen minority node costs no wait. Every operation
 * ends within the operation timeout. Thread-safe.
 */
final class RedlockBackend implements LockBackend<Void> {

    private static final Logger LOG = LoggerFactory.getLogger(RedlockBackend.class);

    /** How long an idle node thread lives. */
    private static final long IDLE_THREAD_SECONDS = 10;

    /** One node: its settings (messages name it), connections, waiters' subscriber and executor. */
    static final class Node {
        final int index;
        final RedisSettings settings;
        final RedisConnections connections;
        final ReleaseSubscriber subscriber;
        final ThreadPoolExecutor executor;
        /** The marker time of the last lock-delay logged for this node, so that each is logged once. */
        volatile String loggedLockDelay;

        Node(int index, RedisSettings settings, RedisConnections connections, ReleaseSubscriber subscriber,
             ThreadPoolExecutor executor) {
            this.index = index;
            this.settings = settings;
            this.connections = connections;
            this.subscriber = subscriber;
            this.executor = executor;
        }
    }

    private final RedisSettings settings;
    private final Keys keys;
    private final List<Node> nodes;
    private final Executor[] executors;
    private final int quorum;
    private final long timeoutNanos;
    private final long abandonNanos;
    private final String lockDelayMillis;
    private final Ticker ticker;
    private final RetryingCleaner cleaner;

    private RedlockBackend(BackendContext context, RedisSettings settings, Keys keys, List<Node> nodes) {
        this.settings = settings;
        this.keys = keys;
        this.nodes = List.copyOf(nodes);
        this.executors = nodes.stream().map(n -> n.executor).toArray(Executor[]::new);
        this.quorum = nodes.size() / 2 + 1;
        this.timeoutNanos = LeaseTimes.saturatedNanos(context.operationTimeout());
        this.abandonNanos = LeaseTimes.abandonBudget(context.operationTimeout(), Duration.ofMillis(50)).toNanos();
        this.lockDelayMillis = settings.lockDelay.isZero() ? "0" : Long.toString(LeaseTimes.ceilMillis(settings.lockDelay));
        this.ticker = context.ticker();
        this.cleaner = RetryingCleaner.start("Redlock", context.threadFactory(), RetryingCleaner.Settings.defaults());
    }

    /**
     * Opens a backend for one client; no I/O.
     *
     * @param context the client's URI, timeouts and thread factory
     * @param settings the URI's settings ({@code REDLOCK} mode)
     * @param sslSocketFactory the socket factory for {@code redlocks://}, or null for the JVM default
     * @return the backend
     */
    static RedlockBackend open(BackendContext context, RedisSettings settings, SSLSocketFactory sslSocketFactory) {
        Keys keys = new Keys(settings.prefix);
        List<Node> nodes = new ArrayList<>();
        for (BackendUri.HostPort hp : settings.hosts) {
            RedisSettings node = settings.forNode(hp.host(), hp.port());
            HostAndPort address = new HostAndPort(node.host, node.port);
            RedisConnections connections = new RedisConnections(node, millis -> {
                JedisClientConfig config = RedisLockBackend.clientConfig(node, millis);
                return new RedisConnections.Setup(config, new RedisSocketFactory(address, config, node.tls, sslSocketFactory));
            }, context.operationTimeout());
            ReleaseSubscriber subscriber = RedisLockBackend.subscriber(context, node, keys, new RedisSocketFactory(address,
                    RedisLockBackend.clientConfig(node, RedisLockBackend.timeoutMillis(context)), node.tls, sslSocketFactory));
            ThreadPoolExecutor executor = new ThreadPoolExecutor(node.poolSize, node.poolSize, IDLE_THREAD_SECONDS,
                    TimeUnit.SECONDS, new LinkedBlockingQueue<>(), context.threadFactory());
            executor.allowCoreThreadTimeOut(true);
            nodes.add(new Node(nodes.size(), node, connections, subscriber, executor));
        }
        return new RedlockBackend(context, settings, keys, nodes);
    }

    Keys keys() {
        return keys;
    }

    List<Node> nodes() {
        return nodes;
    }

    /**
     * @return {@code FENCING}, {@code NOTIFY_WAITERS}, {@code HOLDER_QUERY}, and, unless the URI
     *     turns the lock-delay off, {@code SURVIVES_EMPTY_RESTART} and {@code SURVIVES_SERVER_FAILOVER}
     *     (a node that lost its data grants nothing for one lock-delay while the majority goes on)
     */
    @Override
    public Set<Capability> capabilities() {
        return settings.capabilities();
    }

    /** @return 10 ms */
    @Override
    public Duration minimumLeaseTime() {
        return Duration.ofMillis(10);
    }

    /** @return the lock-delay (a node that lost its data refuses grants that long), or 365 days without one */
    @Override
    public Duration maximumLeaseTime() {
        return settings.maximumLeaseTime();
    }

    /**
     * Starts an acquisition; no I/O.
     *
     * @param request the name, owner id and lease time
     * @return the attempt
     * @throws IllegalArgumentException if the lease is longer than {@link #maximumLeaseTime()}
     */
    @Override
    public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
        settings.checkLease(request.leaseTime());
        return new RedlockAttempt(this, request);
    }


    private boolean[] all() {
        boolean[] which = new boolean[nodes.size()];
        Arrays.fill(which, true);
        return which;
    }

    // ---- acquire ----

    /**
     * One round of an attempt: its value {@code OWNER:0.ROUND} on the nodes of phase 1, the token
     * once phase 2 started, and whether the round was undone (a late answer then undoes itself).
     */
    static final class Round {
        final AcquireRequest request;
        final String roundValue;
        volatile long token;
        volatile boolean undone;

        Round(AcquireRequest request, int number) {
            this.request = request;
            this.roundValue = request.ownerId() + ":0." + number;
        }
    }

    /** Answers of phase 1, by kind. */
    private static final int GRANTED = 1;
    private static final int BUSY = 2;
    private static final int DELAYED = 3;
    private static final int FAILED = 4;
    private static final int WAITING = 5;

    /**
     * One round: phase 1 on every node, and if a majority granted, phase 2 on the granting nodes.
     *
     * @throws LockBackendException if fewer than a majority answered, or phase 2's outcome is unknown
     */
    AttemptResult<Void> tryRound(Round round) {
        AcquireRequest request = round.request;
        String name = request.name();
        long t0 = ticker.nanoTime();
        long deadline = System.nanoTime() + timeoutNanos;
        String lease = Long.toString(LeaseTimes.ceilMillis(request.leaseTime()));
        List<String> lockKeys = List.of(keys.lock(name), keys.fence(name), keys.epoch(name));
        List<String> lockArgs = List.of(request.ownerId(), lease, lockDelayMillis, round.roundValue);
        RedlockFanOut phase1 = RedlockFanOut.start(executors, all(), (i, budget) -> nodes.get(i).connections.eval(
                Script.REDLOCK_LOCK, lockKeys, lockArgs, "acquire", name, budget),
                deadline, (i, answer) -> {
                    if (round.undone && kind(answer) != BUSY && kind(answer) != DELAYED) {
                        undo(i, round);
                    } else if (round.token > 0 && kind(answer) == GRANTED) {
                        lateToken(i, round);
                    }
                });
        Object[] answers = phase1.await(a -> count(a, GRANTED) >= quorum
                || count(a, GRANTED) + count(a, WAITING) < quorum, deadline, "acquire", name);
        noteLockDelays(answers, name);
        int granted = count(answers, GRANTED);
        if (granted < quorum) {
            round.undone = true;
            Object[] now = phase1.snapshot();
            for (int i = 0; i < now.length; i++) {
                int k = kind(now[i]);
                if (k == GRANTED || k == FAILED) {
                    undo(i, round);
                }
            }
            // failures alone leave no majority: nodes that failed, and at the deadline those still silent
            int unknown = count(now, FAILED) + (System.nanoTime() - deadline >= 0 ? count(now, WAITING) : 0);
            if (unknown > nodes.size() - quorum) {
                throw quorumFailure("acquire", name, now);
            }
            return busy(now, t0);
        }
        long max = 0;
        boolean[] granting = new boolean[nodes.size()];
        for (int i = 0; i < answers.length; i++) {
            if (kind(answers[i]) == GRANTED) {
                granting[i] = true;
                max = Math.max(max, raised(answers[i], name));
            }
        }
        long token = max + 1;
        round.token = token;
        // a node that granted since (after the majority was in) gets the token too: from here on a
        // late grant's callback sends it itself, since it sees the token set
        Object[] since = phase1.snapshot();
        for (int i = 0; i < since.length; i++) {
            granting[i] |= kind(since[i]) == GRANTED;
        }
        String tokenValue = Keys.value(request.ownerId(), token);
        List<String> tokenKeys = List.of(keys.lock(name), keys.fence(name));
        List<String> tokenArgs = List.of(round.roundValue, tokenValue, Long.toString(token));
        RedlockFanOut phase2 = RedlockFanOut.start(executors, granting, (i, budget) -> nodes.get(i).connections.eval(
                Script.REDLOCK_TOKEN, tokenKeys, tokenArgs, "acquire", name, budget),
                deadline, (i, answer) -> {
                    if (round.undone) {
                        undo(i, round);
                    }
                });
        Object[] tokened = phase2.await(a -> ones(a) >= quorum || ones(a) + count(a, WAITING, granting) < quorum,
                deadline, "acquire", name);
        int ok = ones(tokened);
        if (ok < quorum) {
            if (uncertain(tokened, granting)) {
                // a late phase 2 may still write the token: only the attempt's abandon (all of this owner) is safe
                throw quorumFailure("acquire", name, tokened);
            }
            undoAll(round);
            return AttemptResult.busy(jitter(t0));
        }
        long elapsed = ticker.nanoTime() - t0;
        long leaseNanos = request.leaseTime().toNanos();
        if (leaseNanos - elapsed - driftMargin(leaseNanos) < minimumLeaseTime().toNanos()) {
            LOG.debug("dlock: the Redlock grant of lock '{}' took {} ms of its {} lease; undone", name,
                    TimeUnit.NANOSECONDS.toMillis(elapsed), request.leaseTime());
            undoAll(round);
            return AttemptResult.busy(jitter(t0));
        }
        return AttemptResult.granted(token, null);
    }

    /** The core's margin (1 % of the lease plus the notice time), as {@code DefaultLease} counts it. */
    private static long driftMargin(long leaseNanos) {
        return leaseNanos / 100 + Math.min(50_000_000L, leaseNanos / 10);
    }

    /**
     * Phase 2 on a node whose phase 1 granted after the majority was in: the grant then holds the
     * token on more nodes (renewed and agreed on by more). Best effort: renew and release need only
     * the majority; the attempt's undo or abandon covers a round undone meanwhile.
     */
    private void lateToken(int i, Round round) {
        String name = round.request.name();
        try {
            nodes.get(i).connections.eval(Script.REDLOCK_TOKEN, List.of(keys.lock(name), keys.fence(name)),
                    List.of(round.roundValue, Keys.value(round.request.ownerId(), round.token), Long.toString(round.token)),
                    "acquire", name, abandonNanos);
        } catch (LockBackendException e) {
            LOG.debug("dlock: a late node of lock '{}' did not take the token", name, e);
        }
        if (round.undone) {
            undo(i, round);
        }
    }

    /** Marks a round undone and undoes it on every node (late answers undo themselves). */
    private void undoAll(Round round) {
        round.undone = true;
        for (int i = 0; i < nodes.size(); i++) {
            undo(i, round);
        }
    }

    /**
     * Deletes this round's values on one node: exact matches only, so a later round of the same
     * attempt is never touched. Retried in the background if the node does not answer.
     */
    private void undo(int i, Round round) {
        String name = round.request.name();
        List<String> values = round.token > 0
                ? List.of(round.roundValue, Keys.value(round.request.ownerId(), round.token)) : List.of(round.roundValue);
        RetryingCleaner.Task task = () -> {
            for (String v : values) {
                nodes.get(i).connections.eval(Script.RELEASE, List.of(keys.lock(name)), List.of(v, keys.released(name)),
                        "clean-up after a failed acquire", name, abandonNanos);
            }
            return Outcome.DONE;
        };
        try {
            nodes.get(i).executor.execute(() -> {
                try {
                    task.attempt();
                } catch (LockBackendException e) {
                    if (e.retryable()) {
                        cleaner.submit("redlock-undo " + i + " " + round.roundValue, task, round.request.leaseTime());
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            LOG.debug("dlock: the client closed before lock '{}' was undone on {}", name, nodes.get(i).settings.address());
        }
    }

    /**
     * The busy answer: the hint is when enough nodes to make a majority should be free, unless a
     * node holds another contender's round in flight (a split vote: that round is about to be
     * tokened or undone): then a random pause of up to twice this round's time plus 20 ms, so that
     * contenders do not collide again.
     */
    private AttemptResult<Void> busy(Object[] answers, long t0) {
        List<Long> freeIn = new ArrayList<>();
        for (Object a : answers) {
            int k = kind(a);
            if ((k == BUSY || k == DELAYED) && a instanceof List<?> l && l.get(1) instanceof Long ms) {
                if (k == BUSY && Long.valueOf(0L).equals(l.get(2))) {
                    return AttemptResult.busy(jitter(t0)); // another contender's round in flight: a split vote
                }
                freeIn.add(Math.max(0, ms));
            }
        }
        Collections.sort(freeIn);
        // the nodes this round got are free again once undone, and those yet to answer may be free
        // (erring short only costs a try): the rest of a majority must expire
        int more = quorum - (nodes.size() - freeIn.size() - count(answers, FAILED));
        if (more >= 1 && freeIn.size() >= more) {
            long ms = freeIn.get(more - 1);
            return ms > 0 ? AttemptResult.busy(Duration.ofMillis(ms)) : AttemptResult.busy();
        }
        return AttemptResult.busy(jitter(t0));
    }

    private Duration jitter(long t0) {
        long roundMicros = Math.max(0, TimeUnit.NANOSECONDS.toMicros(ticker.nanoTime() - t0));
        long bound = 2 * roundMicros + 20_000;
        return Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(ThreadLocalRandom.current().nextLong(1_000, bound + 1)));
    }

    /** The kind of a phase 1 answer. */
    private static int kind(Object a) {
        if (a == RedlockFanOut.PENDING) {
            return WAITING;
        }
        if (a instanceof List<?> l && !l.isEmpty() && l.get(0) instanceof Long code) {
            if (code == 1L && l.size() == 2) {
                return GRANTED;
            }
            if (code == 0L && l.size() == 3 && l.get(1) instanceof Long) {
                return BUSY;
            }
            if (code == 2L && l.size() == 4 && l.get(1) instanceof Long) {
                return DELAYED;
            }
        }
        return FAILED;
    }

    private static int count(Object[] answers, int kind) {
        int n = 0;
        for (Object a : answers) {
            if (kind(a) == kind) {
                n++;
            }
        }
        return n;
    }

    private static int count(Object[] answers, int kind, boolean[] among) {
        int n = 0;
        for (int i = 0; i < answers.length; i++) {
            if (among[i] && kind(answers[i]) == kind) {
                n++;
            }
        }
        return n;
    }

    /** @return whether a phase 2 answer among the granting nodes is missing or a failure (not 0 or 1) */
    private static boolean uncertain(Object[] answers, boolean[] granting) {
        for (int i = 0; i < answers.length; i++) {
            if (granting[i] && !(answers[i] instanceof Long)) {
                return true;
            }
        }
        return false;
    }

    private static int ones(Object[] answers) {
        int n = 0;
        for (Object a : answers) {
            if (Long.valueOf(1L).equals(a)) {
                n++;
            }
        }
        return n;
    }

    private long raised(Object grantedAnswer, String name) {
        long v = parseNumber(((List<?>) grantedAnswer).get(1));
        if (v <= 0) {
            throw unexpected("acquire", name, grantedAnswer);
        }
        return v;
    }

    /** Logs, once per node and lock-delay, that a node refuses grants (it lost its data or restarted). */
    private void noteLockDelays(Object[] answers, String name) {
        for (int i = 0; i < answers.length; i++) {
            if (kind(answers[i]) == DELAYED && answers[i] instanceof List<?> l) {
                Node node = nodes.get(i);
                String at = l.get(2) instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(l.get(2));
                if (!at.equals(node.loggedLockDelay)) {
                    node.loggedLockDelay = at;
                    LOG.warn("dlock: Redlock node {} grants no lock for another {} ms (lock-delay {}): its marker '{}' was"
                            + " missing or written by another server process, so it lost its data or restarted since, or"
                            + " this prefix is new there; the other nodes' majority still grants", node.settings.server(),
                            l.get(1), settings.lockDelay, keys.epoch(name));
                }
            }
        }
    }

    /**
     * Undoes what an attempt whose outcome is unknown may have left: every value of its owner, on
     * every node (the attempt is over, so no later round of it can be hit). Never throws.
     */
    void abandon(AcquireRequest request, Round round) {
        if (round != null) {
            round.undone = true;
        }
        String name = request.name();
        for (int i = 0; i < nodes.size(); i++) {
            int node = i;
            RetryingCleaner.Task task = () -> {
                nodes.get(node).connections.eval(Script.ABANDON, List.of(keys.lock(name)),
                        List.of(request.ownerId(), keys.released(name)), "clean-up after a failed acquire", name,
                        abandonNanos);
                return Outcome.DONE;
            };
            try {
                nodes.get(i).executor.execute(() -> {
                    try {
                        task.attempt();
                    } catch (LockBackendException e) {
                        LOG.debug("dlock: could not undo a possible grant of lock '{}' on {} yet", name,
                                nodes.get(node).settings.address(), e);
                        if (e.retryable()) {
                            cleaner.submit("redlock-abandon " + node + " " + request.ownerId(), task, request.leaseTime());
                        }
                    }
                });
            } catch (RejectedExecutionException e) {
                LOG.debug("dlock: the client closed before lock '{}' was undone on {}", name,
                        nodes.get(node).settings.address());
            }
        }
    }

    // ---- renew, release, holder ----

    /**
     * Renews leases on every node, up to {@link RedisLockBackend#RENEW_BATCH} per script call: a
     * grant is renewed if a majority renewed it, not held if a majority can no longer renew it,
     * else unknown.
     *
     * @param grants the grants
     * @return per grant, in order
     */
    @Override
    public List<RenewOutcome> renew(List<Grant<Void>> grants) {
        for (Grant<Void> grant : grants) {
            settings.checkLease(grant.leaseTime());
        }
        List<RenewOutcome> out = new ArrayList<>(grants.size());
        for (int from = 0; from < grants.size(); from += RedisLockBackend.RENEW_BATCH) {
            List<Grant<Void>> batch = grants.subList(from, Math.min(grants.size(), from + RedisLockBackend.RENEW_BATCH));
            try {
                out.addAll(renewBatch(batch));
            } catch (LockBackendException e) {
                out.addAll(Collections.nCopies(batch.size(), RenewOutcome.unknown(e)));
            }
        }
        return out;
    }

    private List<RenewOutcome> renewBatch(List<Grant<Void>> batch) {
        List<String> lockKeys = new ArrayList<>(batch.size());
        List<String> args = new ArrayList<>(batch.size() * 2);
        for (Grant<Void> grant : batch) {
            lockKeys.add(keys.lock(grant.name()));
            args.add(Keys.value(grant.ownerId(), grant.fencingToken()));
        }
        for (Grant<Void> grant : batch) {
            args.add(Long.toString(LeaseTimes.ceilMillis(grant.leaseTime())));
        }
        String lockName = batch.size() == 1 ? batch.get(0).name() : null;
        String operation = batch.size() == 1 ? "renewal" : "renewal of " + batch.size() + " leases";
        long deadline = System.nanoTime() + timeoutNanos;
        int n = batch.size();
        RedlockFanOut f = RedlockFanOut.start(executors, all(), (i, budget) -> nodes.get(i).connections.eval(
                Script.RENEW, lockKeys, args, operation, lockName, budget), deadline, null);
        Object[] answers = f.await(a -> {
            for (int g = 0; g < n; g++) {
                if (renewVerdict(a, g, n) == null) {
                    return false;
                }
            }
            return true;
        }, deadline, operation, lockName);
        List<RenewOutcome> out = new ArrayList<>(n);
        LockBackendException why = null;
        for (int g = 0; g < n; g++) {
            RenewOutcome o = renewVerdict(answers, g, n);
            if (o == null) {
                if (why == null) {
                    why = quorumFailure(operation, lockName, answers);
                }
                o = RenewOutcome.unknown(why);
            }
            out.add(o);
        }
        return out;
    }

    /** @return renewed (a majority renewed), not held (a majority cannot), or null (undecided) */
    private RenewOutcome renewVerdict(Object[] answers, int g, int n) {
        int yes = 0;
        int no = 0;
        for (Object a : answers) {
            if (a instanceof List<?> l && l.size() == n) {
                if (Long.valueOf(1L).equals(l.get(g))) {
                    yes++;
                } else {
                    no++;
                }
            }
        }
        return yes >= quorum ? RenewOutcome.renewed() : no > nodes.size() - quorum ? RenewOutcome.notHeld() : null;
    }

    /**
     * Releases a lease on every node (this owner's key only) and notifies waiters. A node that does
     * not answer is retried in the background until the lease has ended.
     *
     * @param grant the grant
     * @return released if a majority answered and one deleted the key; not held if a majority
     *     answered and none held it
     * @throws LockBackendException if fewer than a majority answered
     */
    @Override
    public ReleaseOutcome release(Grant<Void> grant) {
        String name = grant.name();
        long deadline = System.nanoTime() + timeoutNanos;
        List<String> lockKeys = List.of(keys.lock(name));
        List<String> args = List.of(grant.ownerId(), keys.released(name));
        RedlockFanOut f = RedlockFanOut.start(executors, all(), (i, budget) -> nodes.get(i).connections.eval(
                Script.ABANDON, lockKeys, args, "release", name, budget), deadline, (i, answer) -> {
                    if (answer instanceof LockBackendException e && e.retryable()) {
                        cleaner.submit("redlock-release " + i + " " + grant.ownerId(), () -> {
                            nodes.get(i).connections.eval(Script.ABANDON, lockKeys, args, "release", name, abandonNanos);
                            return Outcome.DONE;
                        }, grant.leaseTime());
                    }
                });
        Object[] answers = f.await(a -> answeredLongs(a) >= quorum, deadline, "release", name);
        if (answeredLongs(answers) < quorum) {
            throw quorumFailure("release", name, answers);
        }
        for (Object a : answers) {
            if (Long.valueOf(1L).equals(a)) {
                return ReleaseOutcome.RELEASED;
            }
        }
        return ReleaseOutcome.NOT_HELD;
    }

    private static int answeredLongs(Object[] answers) {
        int n = 0;
        for (Object a : answers) {
            if (a instanceof Long) {
                n++;
            }
        }
        return n;
    }

    /**
     * Tells who holds a lock: the {@code OWNER:TOKEN} a majority of the nodes agree on (with the
     * shortest time to expiry among them), or empty if a majority is free.
     *
     * @param name the lock
     * @return the holder, or empty if free
     * @throws LockBackendException if no majority agrees (a grant or release under way, nodes down)
     */
    @Override
    public Optional<LockHolder> holder(String name) {
        long deadline = System.nanoTime() + timeoutNanos;
        RedlockFanOut f = RedlockFanOut.start(executors, all(), (i, budget) -> nodes.get(i).connections.eval(
                Script.HOLDER, List.of(keys.lock(name)), List.of(), "holder query", name, budget), deadline, null);
        Object[] answers = f.await(a -> holderVerdict(a, name) != null, deadline, "holder query", name);
        Optional<LockHolder> verdict = holderVerdict(answers, name);
        if (verdict == null) {
            throw quorumFailure("holder query", name, answers);
        }
        return verdict;
    }

    /** @return the holder a majority agrees on, empty if a majority is free, null if undecided */
    @SuppressWarnings("OptionalAssignedToNull")
    private Optional<LockHolder> holderVerdict(Object[] answers, String name) {
        int free = 0;
        Map<String, Integer> votes = new HashMap<>();
        Map<String, Long> pttls = new HashMap<>();
        for (Object a : answers) {
            if (a instanceof List<?> l) {
                if (l.isEmpty()) {
                    free++;
                } else if (l.size() == 2 && l.get(0) instanceof byte[] raw && l.get(1) instanceof Long pttl) {
                    String v = new String(raw, StandardCharsets.UTF_8);
                    votes.merge(v, 1, Integer::sum);
                    pttls.merge(v, pttl, Math::min);
                }
            }
        }
        if (free >= quorum) {
            return Optional.empty();
        }
        for (Map.Entry<String, Integer> e : votes.entrySet()) {
            if (e.getValue() >= quorum) {
                String v = e.getKey();
                int colon = v.indexOf(':');
                long token = colon > 0 ? parseNumber(v.substring(colon + 1)) : -1;
                if (token <= 0) {
                    continue; // a round's value, not yet a grant
                }
                long pttl = pttls.get(v);
                return Optional.of(new LockHolder(name, v.substring(0, colon), token,
                        pttl >= 0 ? Duration.ofMillis(pttl) : null));
            }
        }
        return null;
    }

    // ---- errors ----

    /**
     * Fewer than a majority answered: a configuration failure if a node reported one (the nodes
     * share their credentials and settings), else a retryable failure naming each node's problem.
     */
    private LockBackendException quorumFailure(String operation, String lockName, Object[] answers) {
        StringBuilder why = new StringBuilder();
        LockBackendException first = null;
        int answered = 0;
        for (int i = 0; i < answers.length; i++) {
            Object a = answers[i];
            if (a instanceof LockConfigurationException c) {
                return c;
            }
            if (a instanceof LockBackendException e) {
                first = first == null ? e : first;
                why.append("; ").append(nodes.get(i).settings.address()).append(": ").append(e.getMessage());
            } else if (a == RedlockFanOut.PENDING) {
                why.append("; ").append(nodes.get(i).settings.address()).append(": no answer (yet)");
            } else {
                answered++;
            }
        }
        String what = lockName == null ? operation : operation + " of lock '" + lockName + "'";
        return new LockBackendException("the " + what + " got no majority answer from the Redlock nodes: " + answered
                + " of " + nodes.size() + " answered, " + quorum + " are needed" + why, lockName, first);
    }

    private LockBackendException unexpected(String operation, String lockName, Object reply) {
        String what = lockName == null ? operation : operation + " of lock '" + lockName + "'";
        return new LockConfigurationException(Kind.INCOMPATIBLE_SERVER, "a Redlock node gave an unexpected answer to"
                + " the " + what + " (" + reply + "): check that no other application uses the key prefix '"
                + settings.prefix + "' and that every node is a Redis 3.2 or later", lockName, null);
    }

    /** @return a positive decimal number's value, or -1 */
    static long parseNumber(Object raw) {
        String s = raw instanceof byte[] b ? new String(b, StandardCharsets.UTF_8)
                : raw instanceof String str ? str : raw instanceof Long l ? Long.toString(l) : null;
        if (s == null || s.isEmpty() || s.length() > 18) {
            return -1;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return -1;
            }
        }
        return Long.parseLong(s);
    }

    /** Stops the node threads, the subscribers and the cleaner, and closes every connection. Never throws. */
    @Override
    public void close() {
        try {
            cleaner.close();
        } finally {
            for (Node n : nodes) {
                n.executor.shutdownNow();
                n.subscriber.close();
            }
            long until = System.nanoTime() + timeoutNanos + TimeUnit.SECONDS.toNanos(1);
            for (Node n : nodes) {
                try {
                    n.executor.awaitTermination(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            for (Node n : nodes) {
                n.connections.close();
            }
        }
    }

    @Override
    public String toString() {
        return "RedlockBackend{" + settings + "}";
    }
}
