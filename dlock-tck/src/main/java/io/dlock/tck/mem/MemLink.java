package io.dlock.tck.mem;

import io.dlock.spi.support.Arguments;
import io.dlock.LockBackendException;
import io.dlock.tck.NetworkFault;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Queue;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * One client's emulated network to a {@link MemServer}. While frozen, requests are held and their
 * callers time out after the operation timeout; on unfreeze, the held requests reach the server
 * late, in order, as a stalled TCP connection would deliver them.
 *
 * <p>It also injects every {@link NetworkFault} kind, with the enum's meaning carried from bytes
 * to requests: a request is applied on the server or not, and its answer reaches the caller or
 * not. A caller whose answer does not come fails with {@link LockBackendException} after the
 * operation timeout; a caller whose "connection" is reset fails at once.
 * <ul>
 *   <li>{@link NetworkFault#DROP}, {@link NetworkFault#DROP_REQUESTS}: the request is not applied,
 *       and the caller times out. On heal, callers still waiting fail at once (the connection is
 *       reset); nothing is delivered.</li>
 *   <li>{@link NetworkFault#DROP_ANSWERS}: the request is applied on the server, the caller gets no
 *       answer and times out. On heal, callers still waiting fail at once.</li>
 *   <li>{@link NetworkFault#RESET}: every call in flight (held, delayed, or waiting for a lost
 *       answer) fails at once; a delayed request not yet applied never is.</li>
 *   <li>{@link NetworkFault#LATENCY}: each request and each answer is delayed by 50 to 500 ms,
 *       drawn from a seeded source ({@link #latencySeed(long)}), in order; a caller whose answer is
 *       later than the operation timeout times out while its request is still applied. On heal,
 *       what is already delayed still arrives, in order, and new requests queue behind it.</li>
 *   <li>{@link NetworkFault#BLACK_HOLE}: calls in flight fail at once (the connections are cut), then
 *       new requests are treated as under DROP.</li>
 * </ul>
 *
 * <p>Bounded: at most {@value #MAX_IN_FLIGHT} requests are held or delayed at once; beyond that a
 * request is not sent at all (as when a stalled connection's send buffer is full) and its caller
 * times out. Delayed requests and answers are carried by one daemon thread per link,
 * {@code dlock-tck-mem-link-N}, which exists only while something is delayed. Thread-safe.
 */
public final class MemLink {

    /** The most requests held (frozen) or delayed (LATENCY) at once; more are not sent. */
    public static final int MAX_IN_FLIGHT = 10_000;

    private static final AtomicInteger IDS = new AtomicInteger();

    private final Duration timeout;
    private final String threadName = "dlock-tck-mem-link-" + IDS.incrementAndGet();
    private final Queue<Call<?>> held = new ArrayDeque<>(); // guarded by this
    /** Requests and answers under way with a delay, by due time then sequence; guarded by this. */
    private final PriorityQueue<Delivery> delayed = new PriorityQueue<>();
    /** Calls whose request or answer was lost, failed at once on heal or reset; guarded by this. */
    private final Set<Call<?>> lost = new HashSet<>();
    private boolean frozen; // guarded by this
    private NetworkFault fault; // the lasting fault other than FREEZE, or null; guarded by this
    private SplittableRandom random; // guarded by this
    private long sequence; // guarded by this
    /** When the newest delayed request is due; a request never overtakes it. Guarded by this. */
    private long lastRequestDue = System.nanoTime();
    /** When the newest delayed answer is due; an answer never overtakes it. Guarded by this. */
    private long lastAnswerDue = lastRequestDue;
    private Thread courier; // guarded by this
    private long sent; // requests that entered the link; guarded by this
    /** Serializes inject and heal. */
    private final Object control = new Object();

    MemLink(Duration timeout) {
        this.timeout = timeout;
        this.random = new SplittableRandom(NetworkFault.defaultSeed());
    }

    /**
     * Gives the TCK a client whose network is this link.
     *
     * @param client the client whose backend calls cross this link
     * @return the client with this link's controls; closing it heals the link and closes the client
     */
    public io.dlock.tck.FreezableClient freezable(io.dlock.LockClient client) {
        Arguments.notNull("client", client);
        MemLink link = this;
        return new io.dlock.tck.FreezableClient() {
            @Override
            public io.dlock.LockClient client() {
                return client;
            }

            @Override
            public void freeze() {
                link.freeze();
            }

            @Override
            public void unfreeze() {
                link.unfreeze();
            }

            @Override
            public java.util.Set<NetworkFault> faults() {
                return java.util.EnumSet.allOf(NetworkFault.class);
            }

            @Override
            public void inject(NetworkFault fault) {
                if (fault == null) {
                    throw new IllegalArgumentException("fault must not be null");
                }
                link.inject(fault);
            }

            @Override
            public void heal() {
                link.heal();
            }

            @Override
            public void close() {
                link.heal();
                client.close();
            }
        };
    }

    /**
     * Creates a link for another backend's calls (see {@link io.dlock.tck.LinkedClients}).
     *
     * @param timeout how long a caller waits for an answer before it fails
     * @return the link
     */
    public static MemLink create(Duration timeout) {
        Arguments.notNull("timeout", timeout);
        return new MemLink(timeout);
    }

    /** Holds back every request from now on. */
    public synchronized void freeze() {
        frozen = true;
    }

    /** Delivers the held requests, in order, and lets new ones through. */
    public void unfreeze() {
        while (true) {
            Call<?> next;
            synchronized (this) {
                next = held.poll();
                if (next == null) {
                    frozen = false;
                    notifyAll(); // the courier holds while frozen
                    return;
                }
            }
            next.apply();
            sendAnswer(next);
        }
    }

    /** @return whether the link is frozen */
    public synchronized boolean isFrozen() {
        return frozen;
    }

    /**
     * Reseeds the source of {@link NetworkFault#LATENCY}'s delays.
     *
     * @param seed the seed
     */
    public synchronized void latencySeed(long seed) {
        random = new SplittableRandom(seed);
    }

    /**
     * Injects a network fault, with the meaning this class's description gives; it lasts until
     * {@link #heal()} (except RESET, one event). The current fault is healed first.
     *
     * @param kind the fault
     * @throws IllegalArgumentException if {@code kind} is null
     */
    public void inject(NetworkFault kind) {
        if (kind == null) {
            throw new IllegalArgumentException("kind must not be null");
        }
        synchronized (control) {
            heal();
            switch (kind) {
                case FREEZE -> freeze();
                case RESET -> reset();
                case BLACK_HOLE -> {
                    reset();
                    setFault(kind);
                }
                default -> setFault(kind);
            }
        }
    }

    private synchronized void setFault(NetworkFault kind) {
        fault = kind;
    }

    /**
     * Ends the current fault: callers waiting for an answer that was lost fail at once, delays stop
     * being added (what is delayed still arrives), and what a freeze held is delivered.
     */
    public void heal() {
        synchronized (control) {
            List<Call<?>> toFail;
            synchronized (this) {
                fault = null;
                toFail = new ArrayList<>(lost);
                lost.clear();
            }
            toFail.forEach(Call::reset);
            unfreeze();
        }
    }

    /** @return the calls held, delayed or waiting for a lost answer (requests and answers under way), for tests */
    synchronized int underWay() {
        return held.size() + delayed.size() + lost.size();
    }

    /** @return how many requests entered the link so far, for tests */
    synchronized long sent() {
        return sent;
    }

    /** @return whether the courier thread is alive (something is or was just delayed), for tests */
    synchronized boolean courierRunning() {
        return courier != null;
    }

    /** The client closed: whatever is still under way fails, so the courier ends. */
    void close() {
        reset();
    }

    /** @return the current lasting fault (FREEZE is {@link #isFrozen()}), or null */
    public synchronized NetworkFault fault() {
        return fault;
    }

    /**
     * @return whether news from the server (a release, a change) can reach this client now: not
     *     while frozen, nor while answers are lost
     */
    /**
     * Tells whether news from the server (a notification) can reach the client now.
     *
     * @return false while frozen or while answers are lost
     */
    public synchronized boolean hearsServer() {
        return !frozen && !dropsAnswers();
    }

    /** @return whether requests sent now are lost; caller holds the monitor */
    private boolean dropsRequests() {
        return fault == NetworkFault.DROP || fault == NetworkFault.DROP_REQUESTS || fault == NetworkFault.BLACK_HOLE;
    }

    /** @return whether answers sent now are lost; caller holds the monitor */
    private boolean dropsAnswers() {
        return fault == NetworkFault.DROP || fault == NetworkFault.DROP_ANSWERS || fault == NetworkFault.BLACK_HOLE;
    }

    /** Fails every call in flight at once, as a reset connection would; delayed requests are never applied. */
    private void reset() {
        List<Call<?>> toFail;
        synchronized (this) {
            toFail = new ArrayList<>(lost);
            lost.clear();
            toFail.addAll(held);
            held.clear();
            for (Delivery d : delayed) {
                toFail.add(d.call);
            }
            delayed.clear();
            lastRequestDue = System.nanoTime();
            lastAnswerDue = lastRequestDue;
            notifyAll();
        }
        toFail.forEach(Call::reset);
    }

    /**
     * Sends one request across the link: applied and answered, held, delayed or lost as the
     * current fault says.
     *
     * @param lockName the lock, for messages, or null
     * @param request the request, run where the server would run it
     * @param <T> the answer's type
     * @return the answer
     * @throws io.dlock.LockBackendException if no answer came within the timeout, or the link was reset
     */
    public <T> T call(String lockName, Supplier<T> request) {
        Arguments.notNull("request", request);
        Call<T> call = new Call<>(request, lockName);
        boolean direct = false;
        boolean applyNow = false;
        synchronized (this) {
            sent++;
            // a request's fate is decided as it leaves the client, an answer's as it leaves the server
            if (frozen && delayed.isEmpty()) {
                if (held.size() < MAX_IN_FLIGHT) {
                    held.add(call);
                }
            } else if (dropsRequests()) {
                lost.add(call);
            } else if (!delayed.isEmpty() || fault == NetworkFault.LATENCY) {
                // behind whatever is delayed (even once healed, or frozen), so order holds
                if (delayed.size() < MAX_IN_FLIGHT) {
                    long due = System.nanoTime() + (fault == NetworkFault.LATENCY ? latency() : 0);
                    if (due - lastRequestDue < 0) {
                        due = lastRequestDue;
                    }
                    lastRequestDue = due;
                    schedule(new Delivery(due, sequence++, call, true));
                }
            } else if (fault == NetworkFault.DROP_ANSWERS) {
                applyNow = true;
            } else {
                direct = true;
            }
        }
        if (direct) {
            return request.get();
        }
        if (applyNow) {
            call.apply();
            sendAnswer(call);
        }
        try {
            return call.future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
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
        } finally {
            synchronized (this) {
                lost.remove(call);
            }
        }
    }

    private long latency() {
        return NetworkFault.drawLatency(random).toNanos();
    }

    /**
     * Sends the answer to an applied request back: lost if answers are being dropped (the caller
     * then times out, or fails on heal), delayed under LATENCY or behind delayed answers, else
     * delivered now.
     */
    private void sendAnswer(Call<?> call) {
        synchronized (this) {
            if (dropsAnswers()) {
                lost.add(call);
                return;
            }
            if (fault == NetworkFault.LATENCY || !delayed.isEmpty()) {
                long due = System.nanoTime() + (fault == NetworkFault.LATENCY ? latency() : 0);
                if (due - lastAnswerDue < 0) {
                    due = lastAnswerDue;
                }
                lastAnswerDue = due;
                schedule(new Delivery(due, sequence++, call, false));
                return;
            }
        }
        call.answer();
    }

    /** Queues a delivery and makes sure the courier runs; caller holds the monitor. */
    private void schedule(Delivery d) {
        delayed.add(d);
        if (courier == null) {
            courier = new Thread(this::carry, threadName);
            courier.setDaemon(true);
            courier.start();
        } else {
            notifyAll();
        }
    }

    /** The courier: delivers what is due, in order, and ends when nothing is delayed any more. */
    private void carry() {
        boolean interrupted = false;
        try {
            while (true) {
                Delivery d;
                synchronized (this) {
                    while (true) {
                        d = delayed.peek();
                        if (d == null) {
                            courier = null;
                            return;
                        }
                        long wait = d.due - System.nanoTime();
                        if (!frozen && wait <= 0) {
                            delayed.poll();
                            break;
                        }
                        try {
                            if (frozen) {
                                wait(100);
                            } else {
                                TimeUnit.NANOSECONDS.timedWait(this, wait);
                            }
                        } catch (InterruptedException e) {
                            interrupted = true; // restored on exit: what is under way still has to arrive
                        }
                    }
                }
                if (d.request) {
                    d.call.apply();
                    sendAnswer(d.call);
                } else {
                    d.call.answer();
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A request or an answer under way with a delay. */
    private static final class Delivery implements Comparable<Delivery> {
        final long due;
        final long seq;
        final Call<?> call;
        final boolean request;

        Delivery(long due, long seq, Call<?> call, boolean request) {
            this.due = due;
            this.seq = seq;
            this.call = call;
            this.request = request;
        }

        @Override
        public int compareTo(Delivery o) {
            int c = Long.compare(due - o.due, 0);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    /** One request: applied on the server once, its outcome kept until the answer is delivered. */
    private static final class Call<T> {
        final Supplier<T> request;
        final String lockName;
        final CompletableFuture<T> future = new CompletableFuture<>();
        private T result;
        private RuntimeException failure;

        Call(Supplier<T> request, String lockName) {
            this.request = request;
            this.lockName = lockName;
        }

        /** Applies the request on the server (the request has arrived). */
        void apply() {
            try {
                result = request.get();
            } catch (RuntimeException e) {
                failure = e;
            }
        }

        /** Delivers the outcome to the caller (the answer has arrived), if it still waits. */
        void answer() {
            if (failure != null) {
                future.completeExceptionally(failure);
            } else {
                future.complete(result);
            }
        }

        /** Fails the caller at once, as a reset connection would. */
        void reset() {
            future.completeExceptionally(new LockBackendException("mem: connection reset (emulated network)",
                    lockName, new java.net.SocketException("Connection reset")));
        }
    }
}
