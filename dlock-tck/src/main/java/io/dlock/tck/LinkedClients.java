package io.dlock.tck;

import io.dlock.Capability;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockHolder;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.RenewOutcome;
import io.dlock.tck.mem.MemLink;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Freezable clients for backends the TCK cannot put a {@link TcpProxy} in front of (an in-process
 * store, a Unix socket, an HTTP client with its own pooling): every call the core makes to the
 * backend crosses an emulated network link ({@link MemLink}, the same one the {@code mem://}
 * reference provider uses), which freezes and injects every {@link NetworkFault} kind at the level
 * of requests: a request is applied or not, its answer arrives or not, a caller that hears nothing
 * fails after the operation timeout.
 *
 * <p>Limits, by construction: only the core's calls cross the link. Traffic a backend sends on its
 * own (session heartbeats, lease keep-alives, watch streams) does not, so a frozen link does not
 * stop a session from being kept alive; for such backends a transport-level fault (a proxy) is the
 * honest choice, and rules that need one (L2's crash, E2) then test less than they claim. A frozen
 * link also stops the backend's notifications from reaching a waiter: {@code turn} then answers a
 * stage that never completes, and the core's timer paces the tries.
 *
 * <pre>{@code
 * public Optional<FreezableClient> openFreezable(LockClientConfig.Builder config) {
 *     return Optional.of(LinkedClients.open(config.build(), new MyStoreProvider()));
 * }
 * }</pre>
 */
public final class LinkedClients {

    private LinkedClients() { }

    /**
     * Opens a client of the given provider whose calls cross a fresh emulated link.
     *
     * @param config the client's configuration (its operation timeout is the link's)
     * @param provider the provider under test
     * @return the client with its link's controls
     * @throws IllegalArgumentException if an argument is null
     */
    public static FreezableClient open(LockClientConfig config, LockProvider provider) {
        if (config == null || provider == null) {
            throw new IllegalArgumentException((config == null ? "config" : "provider") + " must not be null");
        }
        MemLink link = MemLink.create(config.operationTimeout());
        LockClient client = LockClient.open(config, new LinkedProvider(provider, link));
        return link.freezable(client);
    }

    /** The provider under test, with every backend call routed through the link. */
    private static final class LinkedProvider implements LockProvider {
        private final LockProvider real;
        private final MemLink link;

        LinkedProvider(LockProvider real, MemLink link) {
            this.real = real;
            this.link = link;
        }

        @Override
        public String name() {
            return real.name();
        }

        @Override
        public Set<String> schemes() {
            return real.schemes();
        }

        @Override
        public LockBackend<?> open(BackendContext context) {
            return linked(real.open(context), link);
        }
    }

    /** The backend with every call routed through the link; generic so its state type is kept. */
    private static <S> LockBackend<S> linked(LockBackend<S> b, MemLink link) {
        return new LockBackend<S>() {
            @Override
            public Set<Capability> capabilities() {
                return b.capabilities();
            }

            @Override
            public Duration minimumLeaseTime() {
                return b.minimumLeaseTime();
            }

            @Override
            public Duration maximumLeaseTime() {
                return b.maximumLeaseTime();
            }

            @Override
            public AcquireAttempt<S> newAttempt(AcquireRequest request) {
                AcquireAttempt<S> a = b.newAttempt(request);
                return new AcquireAttempt<S>() {
                    // the last answer the backend gave on the far side of the link, whether or not it arrived:
                    // read there too, in request order, so abandon() knows of a grant whose answer was lost
                    private volatile AttemptResult<S> applied;

                    @Override
                    public AttemptResult<S> tryOnce() {
                        return link.call(request.name(), () -> {
                            AttemptResult<S> r = a.tryOnce();
                            applied = r;
                            return r;
                        });
                    }

                    @Override
                    public CompletionStage<Void> turn(Duration maxWait) {
                        // no news crosses a frozen link: the core's timer paces the tries
                        return link.hearsServer() ? a.turn(maxWait) : new CompletableFuture<>();
                    }

                    @Override
                    public void abandon() {
                        try {
                            link.call(request.name(), () -> {
                                if (applied instanceof AttemptResult.Granted<S> granted) {
                                    // granted on the server though the core never heard: release it, owner-checked
                                    b.release(Grant.of(request, granted));
                                }
                                a.abandon();
                                return null;
                            });
                        } catch (RuntimeException e) {
                            // best effort, as abandon() itself: the lease ends by expiry
                        }
                    }
                };
            }

            @Override
            public List<RenewOutcome> renew(List<Grant<S>> grants) {
                return link.call(null, () -> b.renew(grants));
            }

            @Override
            public ReleaseOutcome release(Grant<S> grant) {
                return link.call(grant.name(), () -> b.release(grant));
            }

            @Override
            public Optional<LockHolder> holder(String name) {
                return link.call(name, () -> b.holder(name));
            }

            @Override
            public void close() {
                b.close();
            }
        };
    }
}
