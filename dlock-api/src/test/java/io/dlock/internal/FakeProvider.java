package io.dlock.internal;

import io.dlock.LockBackendException;
import io.dlock.spi.BackendContext;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import java.util.Set;
import java.util.function.Function;

/**
 * The provider of {@link FakeBackend}, registered for the {@code fake} scheme through
 * {@code META-INF/services} in the test resources. {@code ?failOpen} makes opening fail.
 */
public final class FakeProvider implements LockProvider {

    /** The backend most recently opened by a provider made with the public constructor. */
    public static volatile FakeBackend lastOpened;

    private final Function<BackendContext, ? extends LockBackend<?>> factory;

    /** For {@link java.util.ServiceLoader}: a fresh backend per client, with a session thread. */
    public FakeProvider() {
        this(ctx -> {
            FakeBackend b = new FakeBackend(ctx.ticker()).attach(ctx).startSessionThread(ctx.threadFactory());
            lastOpened = b;
            return b;
        });
    }

    public FakeProvider(Function<BackendContext, ? extends LockBackend<?>> factory) {
        this.factory = factory;
    }

    /** A provider that hands out one given backend. */
    public static FakeProvider of(FakeBackend backend) {
        return new FakeProvider(backend::attach);
    }

    @Override
    public String name() {
        return "fake";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("fake");
    }

    @Override
    public LockBackend<?> open(BackendContext context) {
        if (context.uri().param("failOpen").isPresent()) {
            throw new LockBackendException("cannot reach " + context.uri(), null, null);
        }
        return factory.apply(context);
    }
}
