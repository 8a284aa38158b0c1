package io.dlock.spring.integration;

import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockLostException;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration {@link org.springframework.integration.support.locks.LockRegistry} whose
 * locks are dlock locks of one {@link LockClient}: a drop-in for {@code RedisLockRegistry} or
 * {@code JdbcLockRegistry} that works on every dlock backend and gives fencing tokens.
 *
 * <pre>{@code
 * DlockLockRegistry registry = DlockLockRegistry.builder(lockClient)
 *         .prefix("orders:")
 *         .leaseTime(Duration.ofSeconds(30))
 *         .build();
 * Lock lock = registry.obtain("order-42");     // the dlock lock "orders:order-42"
 * }</pre>
 *
 * <p><b>Keys.</b> A key maps to the lock name {@code prefix + key.toString()}; two keys with the
 * same string are the same lock, in this registry and in every registry, on any host, with the
 * same prefix over the same backend.
 *
 * <p><b>Locks.</b> {@link #obtain(Object)} returns a {@link Lock} that is reentrant for the thread
 * that holds it, as Spring Integration's own registries are: the holding thread takes a dlock
 * lease on its first lock and releases it on its matching last {@link Lock#unlock() unlock}.
 * Leases are renewed in the background by the client while held (see {@link Builder#leaseTime}),
 * so a lock is held for as long as its holder wants unless the backend stops vouching for it.
 * What each method of the lock does, including on failure, is described on {@link #obtain}.
 *
 * <p><b>Thread safety.</b> The registry and its locks are thread-safe. Threads of one process
 * exclude each other first on a local lock per key, then on the backend, so only one thread per
 * key and registry waits on the backend at a time.
 *
 * <p><b>Lifecycle.</b> The registry does not own the client: closing the client (which releases
 * every lease it holds) is the application's job. Locks obtained for distinct keys are kept until
 * {@link #expireUnusedOlderThan(long)} drops the ones that are not in use.
 */
public final class DlockLockRegistry implements ExpirableLockRegistry, RenewableLockRegistry {

    private final LockClient client;
    private final String prefix;
    private final LockOptions options;
    private final ConcurrentMap<String, DlockLock> locks = new ConcurrentHashMap<>();

    private DlockLockRegistry(Builder builder) {
        this.client = builder.client;
        this.prefix = builder.prefix;
        LockOptions.Builder opts = LockOptions.builder().autoRenew(true);
        if (builder.leaseTime != null) {
            opts.leaseTime(builder.leaseTime);
        } else {
            opts = builder.client.config().defaultLockOptions().toBuilder().autoRenew(true);
        }
        this.options = opts.build();
    }

    /**
     * Returns a registry over a client with no prefix and the client's default lease time.
     *
     * @param client the client whose locks the registry hands out; not closed by the registry
     * @return the registry
     * @throws IllegalArgumentException if {@code client} is null
     */
    public static DlockLockRegistry of(LockClient client) {
        return builder(client).build();
    }

    /**
     * Starts building a registry over a client.
     *
     * @param client the client whose locks the registry hands out; not closed by the registry
     * @return a new builder
     * @throws IllegalArgumentException if {@code client} is null
     */
    public static Builder builder(LockClient client) {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null");
        }
        return new Builder(client);
    }

    /** @return the prefix put before every key's string to make its lock name; empty if none */
    public String prefix() {
        return prefix;
    }

    /** @return the lease settings of every lock of this registry (always renewed automatically) */
    public LockOptions lockOptions() {
        return options;
    }

    /**
     * Returns the lock for a key: the same instance for the same key while it is cached (see
     * {@link #expireUnusedOlderThan(long)}). No I/O.
     *
     * <p>The lock's methods:
     * <ul>
     * <li>{@link Lock#lock()} waits as long as it takes and is not interruptible: an interrupt
     *     while waiting is remembered and the thread's interrupt flag is set again on return.</li>
     * <li>{@link Lock#lockInterruptibly()} throws {@link InterruptedException} if the flag is set on
     *     entry or the thread is interrupted while waiting (the flag is then clear, as
     *     {@link Lock} specifies); nothing is held afterwards.</li>
     * <li>{@link Lock#tryLock()} makes one attempt on the backend; {@link Lock#tryLock(long,
     *     TimeUnit)} waits at most the given time in all (local wait and backend wait together;
     *     zero or negative makes one attempt) and is interruptible.</li>
     * <li>{@link Lock#unlock()} by a thread that does not hold the lock throws
     *     {@link IllegalMonitorStateException} (as {@code ReentrantLock} and
     *     {@code JdbcLockRegistry} do; {@code RedisLockRegistry} 6.4 throws
     *     {@link IllegalStateException}). The last unlock releases the lease; if the lease had
     *     been lost meanwhile (it expired, or the backend gave the lock to someone else), the
     *     local lock is still released and unlock throws
     *     {@link ConcurrentModificationException}, as Spring's registries do for a lock that
     *     expired in the store, with the {@link LockLostException} as its cause. A backend
     *     failure during release is never thrown: dlock logs it and the lock ends by expiry.</li>
     * <li>A backend failure or timeout while locking ({@link LockBackendException}) surfaces as
     *     Spring's {@link CannotAcquireLockException} with the dlock exception as its cause,
     *     within the client's operation timeout, and nothing is held afterwards. A closed client
     *     gives {@link IllegalStateException}.</li>
     * <li>{@link Lock#newCondition()} throws {@link UnsupportedOperationException}.</li>
     * </ul>
     *
     * @param lockKey the key; its {@code toString()} after the prefix is the lock name
     * @return the lock
     * @throws IllegalArgumentException if {@code lockKey} is null or its lock name is not a valid
     *     dlock name (empty, too long, control characters)
     * @throws IllegalStateException if the client is closed
     */
    @Override
    public Lock obtain(Object lockKey) {
        String name = nameOf(lockKey);
        DlockLock lock = locks.get(name);
        if (lock != null) {
            return lock;
        }
        DistributedLock handle;
        try {
            handle = client.lock(name, options);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("lockKey: " + e.getMessage(), e);
        }
        return locks.computeIfAbsent(name, n -> new DlockLock(handle));
    }

    /**
     * Returns the lease the current thread holds on a key's lock, to read its
     * {@link Lease#fencingToken() fencing token} or {@link Lease#ensureValid() check} it before a
     * side effect.
     *
     * @param lockKey the key
     * @return the lease, or empty if the current thread does not hold the key's lock
     * @throws IllegalArgumentException if {@code lockKey} is null
     */
    public Optional<Lease> currentLease(Object lockKey) {
        DlockLock lock = locks.get(nameOf(lockKey));
        if (lock == null || !lock.local.isHeldByCurrentThread()) {
            return Optional.empty();
        }
        return Optional.ofNullable(lock.lease);
    }

    /**
     * Confirms that the current thread still holds a key's lock. dlock renews every lease of this
     * registry in the background, so there is nothing to send: this method checks that the lease
     * is still valid, and is there so that code written for a {@link RenewableLockRegistry} keeps
     * working (and learns promptly that a lease was lost).
     *
     * @param lockKey the key
     * @throws IllegalArgumentException if {@code lockKey} is null
     * @throws IllegalMonitorStateException if the current thread does not hold the key's lock
     * @throws IllegalStateException if the lease was lost (its cause is the
     *     {@link LockLostException})
     */
    @Override
    public void renewLock(Object lockKey) {
        String name = nameOf(lockKey);
        DlockLock lock = locks.get(name);
        if (lock == null || !lock.local.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("the current thread does not hold lock '" + name + "'");
        }
        try {
            lock.lease.ensureValid();
        } catch (LockLostException e) {
            throw new IllegalStateException("could not renew lock '" + name + "': its lease was lost", e);
        }
        lock.touch();
    }

    /**
     * Drops from the cache the locks that no thread holds or waits for and that were last locked
     * or unlocked more than {@code age} milliseconds ago. A later {@link #obtain} of their keys
     * makes new instances; a thread that still has a dropped instance can keep using it (the
     * backend still excludes it from the new instance's holders). Thread-safe.
     *
     * @param age the idle time in milliseconds, zero or more
     * @throws IllegalArgumentException if {@code age} is negative
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        if (age < 0) {
            throw new IllegalArgumentException("age must not be negative, was " + age);
        }
        long now = System.nanoTime();
        long ageNanos = TimeUnit.MILLISECONDS.toNanos(age);
        locks.values().removeIf(lock -> !lock.local.isLocked() && !lock.local.hasQueuedThreads()
                && now - lock.lastUsed > ageNanos);
    }

    /** @return how many locks are cached (for tests and monitoring) */
    int cachedLocks() {
        return locks.size();
    }

    private String nameOf(Object lockKey) {
        if (lockKey == null) {
            throw new IllegalArgumentException("lockKey must not be null");
        }
        return prefix + lockKey;
    }

    @Override
    public String toString() {
        return "DlockLockRegistry{prefix='" + prefix + "', " + options + "}";
    }

    /** The lock of one key: a local reentrant lock for thread ownership, and a dlock lease. */
    private final class DlockLock implements Lock {

        private final DistributedLock handle;
        private final ReentrantLock local = new ReentrantLock(true);
        /** The lease while held; written and read by the holding thread, read by others. */
        private volatile Lease lease;
        private volatile long lastUsed = System.nanoTime();

        DlockLock(DistributedLock handle) {
            this.handle = handle;
        }

        void touch() {
            lastUsed = System.nanoTime();
        }

        @Override
        public void lock() {
            local.lock();
            if (local.getHoldCount() > 1) {
                return;
            }
            boolean interrupted = false;
            try {
                while (true) {
                    try {
                        held(handle.acquire());
                        return;
                    } catch (InterruptedException e) {
                        // lock() is not interruptible: keep waiting, and set the flag again on return
                        interrupted = true;
                    }
                }
            } catch (RuntimeException e) {
                local.unlock();
                throw translate(e);
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            local.lockInterruptibly();
            if (local.getHoldCount() > 1) {
                return;
            }
            try {
                held(handle.acquire());
            } catch (InterruptedException e) {
                local.unlock();
                throw e;
            } catch (RuntimeException e) {
                local.unlock();
                throw translate(e);
            }
        }

        @Override
        public boolean tryLock() {
            if (!local.tryLock()) {
                return false;
            }
            if (local.getHoldCount() > 1) {
                return true;
            }
            try {
                Optional<Lease> got = handle.tryAcquire();
                if (got.isPresent()) {
                    held(got.get());
                    return true;
                }
                local.unlock();
                return false;
            } catch (RuntimeException e) {
                local.unlock();
                throw translate(e);
            }
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            if (unit == null) {
                throw new IllegalArgumentException("unit must not be null");
            }
            long deadline = System.nanoTime() + Math.max(0, unit.toNanos(time));
            if (!local.tryLock(time, unit)) {
                return false;
            }
            if (local.getHoldCount() > 1) {
                return true;
            }
            try {
                long remaining = Math.max(0, deadline - System.nanoTime());
                Optional<Lease> got = handle.tryAcquire(Duration.ofNanos(remaining));
                if (got.isPresent()) {
                    held(got.get());
                    return true;
                }
                local.unlock();
                return false;
            } catch (InterruptedException e) {
                local.unlock();
                throw e;
            } catch (RuntimeException e) {
                local.unlock();
                throw translate(e);
            }
        }

        private void held(Lease granted) {
            lease = granted;
            touch();
        }

        @Override
        public void unlock() {
            if (!local.isHeldByCurrentThread()) {
                throw new IllegalMonitorStateException(
                        "the current thread does not hold lock '" + handle.name() + "'");
            }
            if (local.getHoldCount() > 1) {
                local.unlock();
                return;
            }
            Lease ending = lease;
            lease = null;
            try {
                try {
                    ending.ensureValid();
                } catch (LockLostException e) {
                    throw new ConcurrentModificationException("the lease on lock '" + handle.name()
                            + "' was lost while held (" + e.reason() + "): whatever it protected may have"
                            + " been changed by another holder meanwhile", e);
                } finally {
                    ending.release();
                }
            } finally {
                touch();
                local.unlock();
            }
        }

        @Override
        public Condition newCondition() {
            throw new UnsupportedOperationException("conditions are not supported by distributed locks");
        }

        private RuntimeException translate(RuntimeException e) {
            if (e instanceof LockBackendException) {
                return new CannotAcquireLockException("failed to lock '" + handle.name() + "': " + e.getMessage(), e);
            }
            return e;
        }

        @Override
        public String toString() {
            Lease current = lease;
            return "DlockLock{name='" + handle.name() + "', "
                    + (current == null ? "free here" : "held, token " + current.fencingToken()) + "}";
        }
    }

    /**
     * Builds a {@link DlockLockRegistry}. Not thread-safe; the registry it builds is immutable in
     * its configuration.
     */
    public static final class Builder {

        private final LockClient client;
        private String prefix = "";
        private Duration leaseTime;

        private Builder(LockClient client) {
            this.client = client;
        }

        /**
         * Sets the prefix put before every key's string to make its lock name (none by default).
         * Registries that must share locks use the same prefix.
         *
         * @param prefix the prefix, possibly empty
         * @return this builder
         * @throws IllegalArgumentException if {@code prefix} is null
         */
        public Builder prefix(String prefix) {
            if (prefix == null) {
                throw new IllegalArgumentException("prefix must not be null");
            }
            this.prefix = prefix;
            return this;
        }

        /**
         * Sets the lease time of every lock; the client's default lease time otherwise. Leases are
         * always renewed in the background (every third of the lease time), so this bounds how
         * long a lock stays held after its holder crashes or is cut off, not how long it can be
         * held. The backend's bounds are checked when a lock is obtained and again when each
         * acquire starts.
         *
         * @param leaseTime positive
         * @return this builder
         * @throws IllegalArgumentException if {@code leaseTime} is null, zero or negative
         */
        public Builder leaseTime(Duration leaseTime) {
            if (leaseTime == null || leaseTime.isZero() || leaseTime.isNegative()) {
                throw new IllegalArgumentException("leaseTime must be positive, was " + leaseTime);
            }
            this.leaseTime = leaseTime;
            return this;
        }

        /**
         * Builds the registry.
         *
         * @return the registry
         */
        public DlockLockRegistry build() {
            return new DlockLockRegistry(this);
        }
    }
}
