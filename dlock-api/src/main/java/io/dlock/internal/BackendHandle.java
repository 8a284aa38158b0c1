package io.dlock.internal;

import io.dlock.Ticker;
import io.dlock.spi.LockBackend;
import java.util.concurrent.Executor;

/**
 * The opened backend with its per-grant state type {@code S} captured once, and the renewer that
 * renews its grants: everything the core does with grants goes through one of these, so the state
 * a backend returned reaches only that backend again, with no cast. Immutable.
 *
 * @param <S> the backend's per-grant state type
 */
final class BackendHandle<S> {

    private final LockBackend<S> backend;
    private final Renewer<S> renewer;

    private BackendHandle(LockBackend<S> backend, Renewer<S> renewer) {
        this.backend = backend;
        this.renewer = renewer;
    }

    /**
     * Captures the backend's state type (a {@code LockBackend<?>} from the provider binds {@code S}
     * here) and makes its renewer.
     */
    static <S> BackendHandle<S> of(LockBackend<S> backend, Ticker ticker, Scheduler scheduler, Executor worker) {
        return new BackendHandle<>(backend, new Renewer<>(backend, ticker, scheduler, worker));
    }

    LockBackend<S> backend() {
        return backend;
    }

    Renewer<S> renewer() {
        return renewer;
    }
}
