package io.dlock.tck;

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
    BLACK_HOLE
}
