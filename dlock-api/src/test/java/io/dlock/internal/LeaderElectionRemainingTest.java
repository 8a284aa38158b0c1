package io.dlock.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dlock.ElectionListener;
import io.dlock.ElectionOptions;
import io.dlock.LeaderElection;
import io.dlock.LockOptions;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link LeaderElection#remaining()}: the validity of the lease behind the leadership, zero when not leading. */
class LeaderElectionRemainingTest {

    private static final Duration LEASE = Duration.ofSeconds(10);
    /** The drift margin of a 10 s lease: 1% plus 50 ms. */
    private static final Duration MARGIN = Duration.ofMillis(150);

    private final Fixture f = new Fixture();

    @AfterEach
    void close() throws InterruptedException {
        f.close();
    }

    @Test
    void remainingIsTheLeadershipLeasesValidityAndZeroOtherwise() throws InterruptedException {
        LockOptions options = LockOptions.builder().leaseTime(LEASE).autoRenew(false).build();
        try (LeaderElection election = LeaderElection.create(f.client, "leader",
                ElectionOptions.builder().lockOptions(options).build(), ElectionListener.NONE)) {
            assertEquals(Duration.ZERO, election.remaining(), "not started: not leading");
            election.start();
            Fixture.waitFor("elected", election::isLeader);
            assertEquals(LEASE.minus(MARGIN), election.remaining());
            f.ticker.advance(Duration.ofSeconds(4));
            assertEquals(LEASE.minus(MARGIN).minusSeconds(4), election.remaining(), "counts down on the client's clock");
            election.close();
            assertEquals(Duration.ZERO, election.remaining(), "closed: not leading");
        }
    }
}
