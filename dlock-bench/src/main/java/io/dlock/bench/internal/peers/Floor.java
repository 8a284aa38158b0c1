package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.Contender;

/** A floor: the raw client calls of one acquire+release, which neither wait nor renew. */
abstract class Floor implements Contender {

    @Override
    public final boolean waits() {
        return false;
    }

    @Override
    public final boolean renews() {
        return false;
    }
}
