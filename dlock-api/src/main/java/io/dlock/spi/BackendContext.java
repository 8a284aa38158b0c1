package io.dlock.spi;

import io.dlock.LockClientConfig;
import io.dlock.Ticker;
import io.dlock.spi.support.Arguments;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ThreadFactory;

/**
 * What the core gives a backend when it opens: the parsed URI, the configuration, the clocks, a
 * thread factory whose threads the client's close checks for, and the event sink. Immutable.
 */
public final class BackendContext {

    private final LockClientConfig config;
    private final BackendUri uri;
    private final ThreadFactory threadFactory;
    private final BackendEvents events;

    /**
     * Creates a context; the core does this, and tests of a backend may too.
     *
     * @param config the client configuration
     * @param uri the parsed URI
     * @param threadFactory makes daemon threads named after the client
     * @param events where the backend reports lost leases
     */
    public BackendContext(LockClientConfig config, BackendUri uri, ThreadFactory threadFactory,
                          BackendEvents events) {
        this.config = Arguments.notNull("config", config);
        this.uri = Arguments.notNull("uri", uri);
        this.threadFactory = Arguments.notNull("threadFactory", threadFactory);
        this.events = Arguments.notNull("events", events);
    }

    /** @return the client configuration */
    public LockClientConfig config() {
        return config;
    }

    /** @return the parsed backend URI */
    public BackendUri uri() {
        return uri;
    }

    /** @return the operation timeout every backend call must respect */
    public Duration operationTimeout() {
        return config.operationTimeout();
    }

    /** @return the monotonic clock */
    public Ticker ticker() {
        return config.ticker();
    }

    /** @return the wall clock, for display only */
    public Clock clock() {
        return config.clock();
    }

    /** @return the factory for any thread the backend needs (daemon, named {@code dlock-...}) */
    public ThreadFactory threadFactory() {
        return threadFactory;
    }

    /** @return the sink for lost-lease events */
    public BackendEvents events() {
        return events;
    }
}
