package io.dlock.tck.mem;

import io.dlock.LockBackendException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * One client's emulated network to a {@link MemServer}. While frozen, requests are held and their
 * callers time out after the operation timeout; on unfreeze, the held requests reach the server
 * late, in order, as a stalled TCP connection would deliver them. Thread-safe.
 */
public final class MemLink {

    private final Duration timeout;
    private final Queue<Runnable> held = new ArrayDeque<>(); // guarded by this
    private boolean frozen; // guarded by this

    MemLink(Duration timeout) {
        this.timeout = timeout;
    }

    /** Holds back every request from now on. */
    public synchronized void freeze() {
        frozen = true;
    }

    /** Delivers the held requests, in order, and lets new ones through. */
    public void unfreeze() {
        while (true) {
            Runnable next;
            synchronized (this) {
                next = held.poll();
                if (next == null) {
                    frozen = false;
                    return;
                }
            }
            next.run();
        }
    }

    /** @return whether the link is frozen */
    public synchronized boolean isFrozen() {
        return frozen;
    }

    <T> T call(String lockName, Supplier<T> request) {
        CompletableFuture<T> answer;
        synchronized (this) {
            if (!frozen) {
                answer = null;
            } else {
                CompletableFuture<T> f = new CompletableFuture<>();
                held.add(() -> {
                    try {
                        f.complete(request.get());
                    } catch (RuntimeException e) {
                        f.completeExceptionally(e);
                    }
                });
                answer = f;
            }
        }
        if (answer == null) {
            return request.get();
        }
        try {
            return answer.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new LockBackendException("mem: no answer within the operation timeout " + timeout
                    + "; check the (emulated) network", lockName, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("mem: interrupted while waiting for an answer", lockName, e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            throw c instanceof RuntimeException ? (RuntimeException) c
                    : new LockBackendException("mem: request failed", lockName, c);
        }
    }
}
