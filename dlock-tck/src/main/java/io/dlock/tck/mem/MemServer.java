package io.dlock.tck.mem;

import io.dlock.spi.support.Arguments;
import io.dlock.spi.support.ChangeSignal;
import io.dlock.LockConfigurationException;
import io.dlock.LockHolder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The in-JVM lock server behind {@code mem://NAME}: one per name per JVM, shared by every client
 * that opens the same URI. Leases expire on the server's own monotonic clock. One fencing counter
 * serves every lock name, so tokens increase per name while the state kept for released locks is
 * nothing at all. Thread-safe (one monitor).
 */
public final class MemServer {

    /** Guards every lock entry and the counters; waiters wait on {@link #changed}. No monitor: a virtual thread waiting here never pins its carrier. */
    private final java.util.concurrent.locks.ReentrantLock state = new java.util.concurrent.locks.ReentrantLock();
    private final java.util.concurrent.locks.Condition changed = state.newCondition();

    private static final Map<String, MemServer> SERVERS = new ConcurrentHashMap<>();

    private final String name;
    private final Map<String, Entry> locks = new HashMap<>(); // guarded by state
    /**
     * Per held lock that someone waits for, the signal of its release: removed and closed when the
     * lock is released (so the next holder's waiters get a new one), which ends the waits.
     */
    private final Map<String, ChangeSignal> turns = new HashMap<>(); // guarded by state
    private final Map<String, MemLink> links = new ConcurrentHashMap<>();
    private long counter; // guarded by state

    private record Entry(String owner, long token, long expiresAt) { }

    private MemServer(String name) {
        this.name = name;
    }

    /**
     * Returns the server of a name, creating it on first use.
     *
     * @param name the server name (the host part of the {@code mem://} URI)
     * @return the server
     */
    public static MemServer named(String name) {
        Arguments.notNull("name", name);
        return SERVERS.computeIfAbsent(name, MemServer::new);
    }

    /**
     * Forgets a server and its locks (for fixtures that are done with it).
     *
     * @param name the server name
     */
    public static void drop(String name) {
        Arguments.notNull("name", name);
        SERVERS.remove(name);
    }

    /** @return this server's name */
    public String name() {
        return name;
    }

    private volatile String password;

    /**
     * Makes this server require a password of every request, as a server started with one would:
     * a client whose URI gives another (or none) is refused with a
     * {@link LockConfigurationException} of kind {@code CREDENTIALS}.
     *
     * @param password the password, or null for none (the default)
     */
    public void requirePassword(String password) {
        this.password = password;
    }

    /**
     * Checks a request's password, as a server checks a connection's credentials.
     *
     * @param given the password of the client's URI, or null
     * @param lockName the lock the request is about, or null
     * @throws LockConfigurationException if this server requires another password
     */
    void authenticate(String given, String lockName) {
        String required = password;
        if (required != null && !required.equals(given)) {
            throw new LockConfigurationException(LockConfigurationException.Kind.CREDENTIALS, "mem: server '" + name
                    + "' rejected the credentials" + (given == null ? " (the uri gives none)" : "")
                    + ": check the password in the uri", lockName, null);
        }
    }

    /**
     * Returns a client's network link to this server, by the id in its URI.
     *
     * @param linkId the {@code link} query parameter of the client's URI
     * @return the link, if such a client is open
     */
    public Optional<MemLink> link(String linkId) {
        Arguments.notNull("linkId", linkId);
        return Optional.ofNullable(links.get(linkId));
    }

    void register(String linkId, MemLink link) {
        links.put(linkId, link);
        if (down) {
            link.freeze();
        }
    }

    private volatile boolean down;

    /** Stops answering every client, as a paused (SIGSTOP) server: requests are held until {@link #resume()}. */
    public void pause() {
        down = true;
        links.values().forEach(MemLink::freeze);
    }

    /** Answers again; held requests are served, late. */
    public void resume() {
        down = false;
        links.values().forEach(MemLink::unfreeze);
    }

    /**
     * Crashes: stops answering and forgets every held lock, as a restart without persistence would.
     * The fencing counter survives (it stands for what a real backend must persist or re-seed so
     * that tokens never go backwards).
     */
    public void kill() {
        pause();
        List<ChangeSignal> woken;
        state.lock();
        try {
            woken = new ArrayList<>(turns.values());
            turns.clear();
            locks.clear();
            // the lock-delay: a lease granted before the crash may still be valid on its holder's clock for up
            // to the longest lease this server ever granted, so nobody is granted anything until then
            lockDelayUntil = now() + longestLease;
            counterAtKill = counter;
            changed.signalAll();
        } finally {
            state.unlock();
        }
        woken.forEach(MemServer::end);
    }

    private long longestLease; // guarded by state
    private long lockDelayUntil = now(); // guarded by state

    void unregister(String linkId) {
        links.remove(linkId);
    }

    private static long now() {
        return System.nanoTime();
    }

    private Entry live(String lock) {
        Entry e = locks.get(lock);
        if (e != null && now() - e.expiresAt >= 0) {
            locks.remove(lock);
            changed.signalAll();
            return null;
        }
        return e;
    }

    /** @return the token granted, or minus the holder's remaining nanoseconds (at most -1) if busy */
    long tryAcquire(String lock, String owner, long leaseNanos) {
        state.lock();
        try {
            return tryAcquire(lock, owner, leaseNanos, true);
        } finally {
            state.unlock();
        }
    }

    long tryAcquire(String lock, String owner, long leaseNanos, boolean lockDelay) {
        state.lock();
        try {
            Entry e = live(lock);
            if (e != null) {
                return -Math.max(1, e.expiresAt - now());
            }
            if (lockDelay && now() - lockDelayUntil < 0) {
                return -Math.max(1, lockDelayUntil - now());
            }
            longestLease = Math.max(longestLease, leaseNanos);
            long token = ++counter;
            locks.put(lock, new Entry(owner, token, now() + leaseNanos));
            return token;
        } finally {
            state.unlock();
        }
    }

    boolean renew(String lock, String owner, long token, long leaseNanos) {
        state.lock();
        try {
            Entry e = live(lock);
            if (e == null || !e.owner.equals(owner) || e.token != token) {
                return false;
            }
            longestLease = Math.max(longestLease, leaseNanos);
            locks.put(lock, new Entry(owner, token, now() + leaseNanos));
            return true;
        } finally {
            state.unlock();
        }
    }

    boolean release(String lock, String owner, long token) {
        ChangeSignal woken;
        state.lock();
        try {
            Entry e = live(lock);
            if (e == null || !e.owner.equals(owner) || e.token != token) {
                return false;
            }
            locks.remove(lock);
            changed.signalAll();
            woken = turns.remove(lock);
        } finally {
            state.unlock();
        }
        end(woken);
        return true;
    }

    /** Deletes a lock whoever holds it: only the TCK's deliberately broken provider calls this. */
    boolean forceRelease(String lock) {
        ChangeSignal woken;
        boolean had;
        state.lock();
        try {
            had = locks.remove(lock) != null;
            changed.signalAll();
            woken = turns.remove(lock);
        } finally {
            state.unlock();
        }
        end(woken);
        return had;
    }

    /**
     * A waiting attempt's turn: a stage that completes when the lock is released (or the server is
     * killed), at once if it is free now. No thread waits for it; a lock that merely expires does
     * not complete it (the busy answer's hint, the holder's remaining time, paces that wait).
     *
     * @param lock the lock name
     * @return a new stage
     */
    CompletableFuture<Void> nextRelease(String lock) {
        ChangeSignal release;
        long seen;
        state.lock();
        try {
            if (live(lock) == null) {
                return CompletableFuture.completedFuture(null);
            }
            release = turns.computeIfAbsent(lock, k -> new ChangeSignal());
            seen = release.generation(); // read under the state lock: a release after it ends the wait
        } finally {
            state.unlock();
        }
        return release.changeAfter(seen);
    }

    /** Ends the waits of a released lock, outside the state lock: what waits may try again at once. */
    private static void end(ChangeSignal release) {
        if (release != null) {
            release.close();
        }
    }

    Optional<LockHolder> holder(String lock) {
        state.lock();
        try {
            Entry e = live(lock);
            return e == null ? Optional.empty()
                    : Optional.of(new LockHolder(lock, e.owner, e.token, Duration.ofNanos(Math.max(0, e.expiresAt - now()))));
        } finally {
            state.unlock();
        }
    }

    /**
     * Waits until the lock is released or expires, at most {@code maxNanos}, blocking the thread:
     * only the TCK's deliberately broken providers wait this way.
     */
    void awaitChange(String lock, long maxNanos) throws InterruptedException {
        state.lock();
        try {
            Entry start = live(lock);
            if (start == null) {
                return;
            }
            long deadline = now() + maxNanos;
            while (true) {
                long left = deadline - now();
                Entry e = live(lock);
                if (left <= 0 || e == null || e.token != start.token) {
                    return;
                }
                long wait = Math.min(left, e.expiresAt - now());
                if (wait > 0) {
                    changed.awaitNanos(wait);
                }
            }
        } finally {
            state.unlock();
        }
    }

    // ---- broken behaviours, for the TCK's self-test mutants only (never called by the reference provider) ----

    /** Extends whoever holds the lock: a renew without the owner check. */
    boolean renewWhoeverHolds(String lock, long leaseNanos) {
        state.lock();
        try {
            Entry e = live(lock);
            if (e == null) {
                return false;
            }
            locks.put(lock, new Entry(e.owner, e.token, now() + leaseNanos));
            return true;
        } finally {
            state.unlock();
        }
    }

    /** Renews, re-creating the entry if the server no longer has it. */
    boolean renewOrRecreate(String lock, String owner, long token, long leaseNanos) {
        state.lock();
        try {
            Entry e = live(lock);
            if (e != null && (!e.owner.equals(owner) || e.token != token)) {
                return false;
            }
            locks.put(lock, new Entry(owner, token, now() + leaseNanos));
            return true;
        } finally {
            state.unlock();
        }
    }

    /** Extends every lock whose owner id starts with the prefix, except the owners named (a session's keep-alive). */
    void renewAllOf(String ownerPrefix, long leaseNanos, java.util.Set<String> except) {
        state.lock();
        try {
            for (Map.Entry<String, Entry> e : locks.entrySet()) {
                if (e.getValue().owner.startsWith(ownerPrefix) && !except.contains(e.getValue().owner)
                        && now() - e.getValue().expiresAt < 0) {
                    e.setValue(new Entry(e.getValue().owner, e.getValue().token, now() + leaseNanos));
                }
            }
        } finally {
            state.unlock();
        }
    }

    private long counterAtKill; // guarded by state

    /** @return the fencing counter as it was at the last kill (0 before any) */
    long counterAtKill() {
        state.lock();
        try {
            return counterAtKill;
        } finally {
            state.unlock();
        }
    }

    /** @return how many locks are held now (for tests of bounded state) */
    public int size() {
        state.lock();
        try {
            return locks.size();
        } finally {
            state.unlock();
        }
    }
}
