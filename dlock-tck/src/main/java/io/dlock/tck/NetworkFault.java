package io.dlock.tck;

import java.time.Duration;
import java.util.SplittableRandom;

/**
 * A fault in the network between one client and its backend, injected through
 * {@link FreezableClient#inject(NetworkFault)} and ended by {@link FreezableClient#heal()}. Each
 * kind is something real networks do to TCP connections; a fixture declares the kinds it can
 * inject in {@link FreezableClient#faults()}, and rules that need a kind it lacks skip that part.
 */
public enum NetworkFault {

    /**
     * Traffic is held both ways, connections stay open, and what was held is delivered late on
     * heal: a stalled network, or to the server a long pause of the client. The same as
     * {@link FreezableClient#freeze()}.
     */
    FREEZE,

    /**
     * Bytes are lost both ways while the fault lasts; connections stay open, so the peers see
     * silence. On heal, every connection that lost bytes is reset: TCP never delivers a stream
     * with a hole in it, so a connection that lost bytes cannot be used again.
     */
    DROP,

    /**
     * One direction lost: requests reach the server and are applied, answers are lost. On heal the
     * connections that lost answers are reset. This is how a grant, renewal or release takes effect
     * on the server while the client times out and cannot tell.
     */
    DROP_ANSWERS,

    /**
     * The other direction lost: requests are lost, while answers to what the server had already
     * received still flow. On heal the connections that lost requests are reset.
     */
    DROP_REQUESTS,

    /** Every open connection is reset (RST) at once; new connections are accepted as usual. Heal does nothing. */
    RESET,

    /**
     * Every chunk of bytes, either way, is delayed by 50 to 500 ms (drawn per chunk from the TCK's
     * seed), in order: a slow, congested path.
     */
    LATENCY,

    /**
     * Open connections are cut, and new ones are accepted but never forwarded: a listener that
     * says nothing, as a half-dead load balancer or a wrong port would.
     */
    BLACK_HOLE;

    /** The shortest delay {@link #LATENCY} adds to a chunk (or to a request or an answer). */
    public static final Duration MIN_LATENCY = Duration.ofMillis(50);

    /** The longest delay {@link #LATENCY} adds to a chunk (or to a request or an answer). */
    public static final Duration MAX_LATENCY = Duration.ofMillis(500);

    /**
     * The seed that links draw {@link #LATENCY}'s delays from when none is given: the TCK's seed,
     * the system property {@code dlock.tck.seed}, or {@link TckSupport#DEFAULT_SEED}.
     *
     * @return the seed
     */
    public static long defaultSeed() {
        return Long.getLong("dlock.tck.seed", TckSupport.DEFAULT_SEED);
    }

    /**
     * Draws one {@link #LATENCY} delay, uniformly from {@link #MIN_LATENCY} to {@link #MAX_LATENCY}
     * (both included, whole milliseconds).
     *
     * @param random the link's seeded source, which the caller guards if it is shared
     * @return the delay
     * @throws IllegalArgumentException if {@code random} is null
     */
    public static Duration drawLatency(SplittableRandom random) {
        if (random == null) {
            throw new IllegalArgumentException("random must not be null");
        }
        long min = MIN_LATENCY.toMillis();
        return Duration.ofMillis(min + random.nextLong(MAX_LATENCY.toMillis() - min + 1));
    }
}
