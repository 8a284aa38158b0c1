package io.dlock.tck.mem;

import io.dlock.Capability;
import io.dlock.LockBackendException;
import io.dlock.LockHolder;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.HeldLock;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Deliberately broken providers, each the reference provider with one bug, for the TCK's
 * self-test: each must fail exactly the rule its bug breaks. Registered for the tests only, under
 * their own schemes.
 */
public final class BrokenProviders {

    private BrokenProviders() { }

    /** Delegates everything to the reference backend; subclasses break one thing. */
    abstract static class Broken implements LockProvider {
        @Override
        public String name() {
            return schemes().iterator().next();
        }

        @Override
        public LockBackend open(BackendContext context) {
            return wrap((MemLockProvider.MemBackend) new MemLockProvider().open(context));
        }

        abstract LockBackend wrap(MemLockProvider.MemBackend real);
    }

    /** Forwards to the real backend. */
    static class Forwarding implements LockBackend {
        final MemLockProvider.MemBackend real;

        Forwarding(MemLockProvider.MemBackend real) {
            this.real = real;
        }

        @Override
        public Set<Capability> capabilities() {
            return real.capabilities();
        }

        @Override
        public Duration minimumLeaseTime() {
            return real.minimumLeaseTime();
        }

        @Override
        public AcquireAttempt newAttempt(AcquireRequest request) {
            return real.newAttempt(request);
        }

        @Override
        public boolean[] renew(List<? extends HeldLock> locks) {
            return real.renew(locks);
        }

        @Override
        public boolean release(HeldLock lock) {
            return real.release(lock);
        }

        @Override
        public Optional<LockHolder> holder(String name) {
            return real.holder(name);
        }

        @Override
        public void close() {
            real.close();
        }
    }

    /** Forwards an attempt; subclasses break one step. */
    static class ForwardingAttempt implements AcquireAttempt {
        private final AcquireAttempt delegate;

        ForwardingAttempt(AcquireAttempt delegate) {
            this.delegate = delegate;
        }

        @Override
        public AttemptResult tryOnce() {
            return delegate.tryOnce();
        }

        @Override
        public void awaitTurn(Duration maxWait) throws InterruptedException {
            delegate.awaitTurn(maxWait);
        }

        @Override
        public void abandon() {
            delegate.abandon();
        }
    }

    /** Bug: release deletes the lock without checking the owner. Breaks S3. */
    public static final class ReleaseWithoutOwnerCheck extends Broken {
        @Override
        public Set<String> schemes() {
            return Set.of("broken-release");
        }

        @Override
        LockBackend wrap(MemLockProvider.MemBackend real) {
            return new Forwarding(real) {
                @Override
                public boolean release(HeldLock lock) {
                    return real.link.call(lock.name(), () -> real.server.forceRelease(lock.name()));
                }
            };
        }
    }

    /**
     * Bug: the token handed to the holder is counted by the client (1, 2, 3, ... per client)
     * instead of by the server, so two clients reuse tokens. Breaks S2, and with it S8: a stalled
     * holder's token is no lower than its successor's, so the fence cannot tell them apart.
     */
    public static final class TokenDoesNotIncrease extends Broken {
        @Override
        public Set<String> schemes() {
            return Set.of("broken-token");
        }

        private record Real(HeldLock lock, long token) implements HeldLock {
            @Override
            public String name() {
                return lock.name();
            }

            @Override
            public String ownerId() {
                return lock.ownerId();
            }

            @Override
            public long fencingToken() {
                return token;
            }

            @Override
            public Duration leaseTime() {
                return lock.leaseTime();
            }

            @Override
            public Object backendState() {
                return null;
            }
        }

        @Override
        LockBackend wrap(MemLockProvider.MemBackend real) {
            java.util.concurrent.atomic.AtomicLong clientCounter = new java.util.concurrent.atomic.AtomicLong();
            return new Forwarding(real) {
                @Override
                public AcquireAttempt newAttempt(AcquireRequest request) {
                    return new ForwardingAttempt(real.newAttempt(request)) {
                        @Override
                        public AttemptResult tryOnce() {
                            AttemptResult r = super.tryOnce();
                            return r.granted() ? AttemptResult.granted(clientCounter.incrementAndGet(), r.fencingToken()) : r;
                        }
                    };
                }

                @Override
                public boolean[] renew(List<? extends HeldLock> locks) {
                    List<HeldLock> fixed = new ArrayList<>();
                    for (HeldLock l : locks) {
                        fixed.add(new Real(l, (Long) l.backendState()));
                    }
                    return real.renew(fixed);
                }

                @Override
                public boolean release(HeldLock lock) {
                    return real.release(new Real(lock, (Long) lock.backendState()));
                }
            };
        }
    }

    /**
     * Bug: renewal is fire-and-forget: it reports success without waiting for the server, so a
     * holder cut off from the server stays valid forever. Breaks S7.
     */
    public static final class ValidityNeverEnds extends Broken {
        @Override
        public Set<String> schemes() {
            return Set.of("broken-validity");
        }

        @Override
        LockBackend wrap(MemLockProvider.MemBackend real) {
            return new Forwarding(real) {
                @Override
                public boolean[] renew(List<? extends HeldLock> locks) {
                    List<HeldLock> copy = new ArrayList<>(locks);
                    Thread sender = new Thread(() -> {
                        try {
                            real.renew(copy);
                        } catch (LockBackendException ignored) {
                            // the bug: nobody looks at the answer
                        }
                    }, "dlock-tck-broken-renew");
                    sender.setDaemon(true);
                    sender.start();
                    boolean[] all = new boolean[locks.size()];
                    java.util.Arrays.fill(all, true);
                    return all;
                }
            };
        }
    }

    /** Bug: a waiter ignores the wait it was given and waits up to 5 s for a release. Breaks L4. */
    public static final class WaitIgnoresTimeout extends Broken {
        @Override
        public Set<String> schemes() {
            return Set.of("broken-wait");
        }

        @Override
        LockBackend wrap(MemLockProvider.MemBackend real) {
            return new Forwarding(real) {
                @Override
                public AcquireAttempt newAttempt(AcquireRequest request) {
                    return new ForwardingAttempt(real.newAttempt(request)) {
                        @Override
                        public void awaitTurn(Duration maxWait) throws InterruptedException {
                            real.server.awaitChange(request.name(), Duration.ofSeconds(5).toNanos());
                        }
                    };
                }
            };
        }
    }
}
