package io.dlock.tck.example;

import io.dlock.Capability;
import io.dlock.LockHolder;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.BackendContext;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.RenewOutcome;
import io.dlock.tck.LockProviderTck;
import io.dlock.tck.TckFixture;
import io.dlock.tck.mem.MemFixture;
import io.dlock.tck.mem.MemLockProvider;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What docs/TCK.md tells a provider author who decorates another provider: wrap the reference
 * provider from outside its package and run the whole contract on the wrapper. Here the wrapper
 * counts backend calls; it must pass every rule the reference passes.
 */
class WrappedProviderTckTest extends LockProviderTck {

    /** A provider that delegates to mem:// and counts the calls; registered under {@code wrapped-mem}. */
    public static final class CountingProvider implements LockProvider {
        static final AtomicLong CALLS = new AtomicLong();

        /** For ServiceLoader. */
        public CountingProvider() { }

        @Override
        public String name() {
            return "wrapped-mem";
        }

        @Override
        public Set<String> schemes() {
            return Set.of("wrapped-mem");
        }

        @Override
        public LockBackend<?> open(BackendContext context) {
            return counting(new MemLockProvider().open(context));
        }

        /** Wraps any backend, keeping its state type: a decorator needs no cast. */
        private static <S> LockBackend<S> counting(LockBackend<S> real) {
            return new LockBackend<S>() {
                @Override
                public Set<Capability> capabilities() {
                    return real.capabilities();
                }

                @Override
                public Duration minimumLeaseTime() {
                    return real.minimumLeaseTime();
                }

                @Override
                public Duration maximumLeaseTime() {
                    return real.maximumLeaseTime();
                }

                @Override
                public AcquireAttempt<S> newAttempt(AcquireRequest request) {
                    CALLS.incrementAndGet();
                    return real.newAttempt(request);
                }

                @Override
                public List<RenewOutcome> renew(List<Grant<S>> grants) {
                    CALLS.incrementAndGet();
                    return real.renew(grants);
                }

                @Override
                public ReleaseOutcome release(Grant<S> grant) {
                    CALLS.incrementAndGet();
                    return real.release(grant);
                }

                @Override
                public Optional<LockHolder> holder(String name) {
                    CALLS.incrementAndGet();
                    return real.holder(name);
                }

                @Override
                public void close() {
                    real.close();
                }
            };
        }
    }

    @Override
    protected TckFixture createFixture() {
        return new MemFixture("wrapped-mem") {
            @Override
            public boolean reportable() {
                return false; // an example, not a column of the compatibility report
            }
        };
    }
}
