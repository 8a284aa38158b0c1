package io.dlock.tck.mem;

import io.dlock.spi.support.Arguments;
import io.dlock.Capability;
import io.dlock.LockHolder;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendUri;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.RenewOutcome;
import java.util.ArrayList;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The reference provider, {@code mem://NAME}: an in-JVM lock server that passes every TCK rule,
 * for users' unit tests and as the TCK's own yardstick. Clients that open the same NAME in one JVM
 * share one server; each client has its own emulated network link, which the TCK can freeze or
 * inject other {@link io.dlock.tck.NetworkFault network faults} into (see {@link MemLink}).
 * Capabilities: FENCING, NOTIFY_WAITERS, HOLDER_QUERY, SURVIVES_EMPTY_RESTART (a lock-delay after
 * {@link MemServer#kill()}).
 */
public final class MemLockProvider implements LockProvider {

    /** Creates the provider (used by {@link java.util.ServiceLoader}). */
    public MemLockProvider() { }

    @Override
    public String name() {
        return "mem";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("mem");
    }

    @Override
    public LockBackend<Void> open(BackendContext context) {
        Arguments.notNull("context", context);
        BackendUri uri = context.uri();
        String server = uri.hosts().isEmpty() ? "default" : uri.hosts().get(0).host();
        String linkId = uri.param("link").orElse(UUID.randomUUID().toString());
        return new MemBackend(MemServer.named(server), linkId, context.operationTimeout(), uri.password().orElse(null));
    }

    /**
     * The backend: every request crosses the client's {@link MemLink}, and the server checks the
     * URI's password on each (see {@link MemServer#requirePassword}). The server keys a grant by
     * name, owner id and token, so it needs no state of its own ({@code Void}).
     */
    static class MemBackend implements LockBackend<Void> {
        final MemServer server;
        final MemLink link;
        private final String linkId;
        private final String password;

        MemBackend(MemServer server, String linkId, Duration timeout) {
            this(server, linkId, timeout, null);
        }

        MemBackend(MemServer server, String linkId, Duration timeout, String password) {
            this.server = server;
            this.linkId = linkId;
            this.password = password;
            this.link = new MemLink(timeout);
            server.register(linkId, link);
        }

        /** Sends one request over the link; on the server, the password is checked first. */
        <T> T request(String lockName, Supplier<T> op) {
            return link.call(lockName, () -> {
                server.authenticate(password, lockName);
                return op.get();
            });
        }

        @Override
        public Set<Capability> capabilities() {
            return EnumSet.of(Capability.FENCING, Capability.NOTIFY_WAITERS, Capability.HOLDER_QUERY,
                    Capability.SURVIVES_EMPTY_RESTART);
        }

        @Override
        public Duration minimumLeaseTime() {
            return Duration.ofMillis(1);
        }

        @Override
        public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
            long leaseNanos = request.leaseTime().toNanos();
            return new AcquireAttempt<Void>() {
                private volatile boolean unknown;

                @Override
                public AttemptResult<Void> tryOnce() {
                    unknown = true;
                    long r = request(request.name(), () -> server.tryAcquire(request.name(), request.ownerId(), leaseNanos));
                    unknown = false;
                    return r > 0 ? AttemptResult.granted(r, null) : AttemptResult.busy(Duration.ofNanos(-r));
                }

                /** The stage of the last turn; completed when the next is asked for (it is stale then). */
                private CompletableFuture<Void> lastTurn;

                @Override
                public CompletionStage<Void> turn(Duration maxWait) {
                    if (lastTurn != null) {
                        lastTurn.complete(null); // lets the server drop it from its waiters
                    }
                    // no news gets through a frozen link, or one that loses answers: the core's timer paces the tries
                    lastTurn = link.hearsServer() ? server.nextRelease(request.name()) : new CompletableFuture<>();
                    return lastTurn;
                }

                @Override
                public void abandon() {
                    if (lastTurn != null) {
                        lastTurn.complete(null);
                    }
                    if (unknown) {
                        // the grant may have happened without us hearing: undo it, owner-checked
                        try {
                            request(request.name(), () -> {
                                Optional<LockHolder> h = server.holder(request.name());
                                return h.isPresent() && h.get().ownerId().equals(request.ownerId())
                                        && server.release(request.name(), request.ownerId(), h.get().fencingToken());
                            });
                        } catch (RuntimeException ignored) {
                            // best effort: it expires otherwise
                        }
                    }
                }
            };
        }

        @Override
        public List<RenewOutcome> renew(List<Grant<Void>> grants) {
            return request(null, () -> {
                List<RenewOutcome> out = new ArrayList<>(grants.size());
                for (Grant<Void> g : grants) {
                    out.add(server.renew(g.name(), g.ownerId(), g.fencingToken(), g.leaseTime().toNanos())
                            ? RenewOutcome.renewed() : RenewOutcome.notHeld());
                }
                return out;
            });
        }

        @Override
        public ReleaseOutcome release(Grant<Void> grant) {
            return request(grant.name(), () -> server.release(grant.name(), grant.ownerId(), grant.fencingToken()))
                    ? ReleaseOutcome.RELEASED : ReleaseOutcome.NOT_HELD;
        }

        @Override
        public Optional<LockHolder> holder(String name) {
            return request(name, () -> server.holder(name));
        }

        @Override
        public void close() {
            server.unregister(linkId);
            link.close();
        }
    }
}
