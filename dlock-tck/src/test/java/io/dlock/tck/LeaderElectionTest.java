package io.dlock.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.ElectionListener;
import io.dlock.ElectionOptions;
import io.dlock.LeaderElection;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import io.dlock.RevokeReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link LeaderElection}'s own contract, beyond the TCK's E rules, on the reference provider:
 * lifecycle, argument checks, listener order and failures, the thread, and a client closed under a
 * leading election. Time bounds are generous (seconds for what takes milliseconds).
 */
class LeaderElectionTest {

    private static final Duration LEASE = Duration.ofMillis(600);
    private static final Duration PROMPT = Duration.ofSeconds(5);

    private final String server = "election-test-" + System.nanoTime();
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
    }

    private LockClient client() {
        LockClient c = LockClient.open(LockClientConfig.builder("mem://" + server).operationTimeout(Duration.ofMillis(500))
                .retry(Duration.ofMillis(10), Duration.ofMillis(100))
                .defaultLockOptions(LockOptions.builder().leaseTime(LEASE).build()).build());
        opened.add(c);
        return c;
    }

    private LeaderElection election(LockClient client, String name, ElectionListener listener) {
        LeaderElection e = LeaderElection.create(client, name, ElectionOptions.builder().resignPause(Duration.ofMillis(200))
                .retryDelay(Duration.ofMillis(50)).build(), listener);
        opened.add(e);
        return e;
    }

    private static boolean await(BooleanSupplier condition, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() - deadline < 0) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(5);
        }
        return condition.getAsBoolean();
    }

    private static Set<String> electionThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.startsWith("dlock-election-")).collect(Collectors.toSet());
    }

    /** Records listener calls as "elected:TERM" and "revoked:REASON". */
    private static class Recorder implements ElectionListener {
        final List<String> calls = new CopyOnWriteArrayList<>();

        @Override
        public void onElected(long term) {
            calls.add("elected:" + term);
        }

        @Override
        public void onRevoked(RevokeReason reason) {
            calls.add("revoked:" + reason);
        }
    }

    @Test
    void argumentsAreChecked() {
        LockClient c = client();
        assertThrows(IllegalArgumentException.class, () -> LeaderElection.create(null, "x", ElectionListener.NONE));
        assertThrows(IllegalArgumentException.class, () -> LeaderElection.create(c, "", ElectionListener.NONE));
        assertThrows(IllegalArgumentException.class, () -> LeaderElection.create(c, "x", null, ElectionListener.NONE));
        assertThrows(IllegalArgumentException.class, () -> LeaderElection.create(c, "x", null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ElectionOptions.builder().resignPause(Duration.ofMillis(-1)));
        assertTrue(e.getMessage().contains("resignPause"), e.getMessage());
        c.close();
        assertThrows(IllegalStateException.class, () -> LeaderElection.create(c, "x", ElectionListener.NONE));
    }

    @Test
    void anUnstartedElectionObservesAndNeverLeads() throws Exception {
        LockClient c = client();
        LeaderElection observer = election(c, "observed", ElectionListener.NONE);
        assertFalse(observer.isLeader());
        assertEquals(OptionalLong.empty(), observer.term());
        assertFalse(observer.resign(), "nothing to resign");
        assertTrue(observer.leader().isEmpty());
        Lease held = client().lock("observed").tryAcquire().orElseThrow();
        assertEquals(held.fencingToken(), observer.leader().orElseThrow().fencingToken());
        assertEquals(held.ownerId(), observer.leader().orElseThrow().ownerId());
        held.release();
        observer.close();
        observer.close(); // idempotent
        assertThrows(IllegalStateException.class, observer::start, "a closed election cannot start");
    }

    @Test
    void callbacksAlternateAndCloseRevokesBeforeReleasing() throws Exception {
        LockClient c = client();
        LockClient other = client();
        AtomicReference<Boolean> heldDuringRevoke = new AtomicReference<>();
        Recorder recorder = new Recorder() {
            @Override
            public void onRevoked(RevokeReason reason) {
                // told before the release: nobody else can have the lock yet
                heldDuringRevoke.set(other.lock("alternate").tryAcquire().map(l -> {
                    l.release();
                    return false;
                }).orElse(true));
                super.onRevoked(reason);
            }
        };
        LeaderElection e = election(c, "alternate", recorder).start();
        assertTrue(e.start() == e, "start() is idempotent and returns the election");
        assertTrue(await(e::isLeader, PROMPT));
        long term = e.term().orElseThrow();
        assertTrue(e.resign());
        assertTrue(heldDuringRevoke.get(), "onRevoked(RESIGNED) ran while the lock was still held");
        assertTrue(await(e::isLeader, PROMPT), "contends again after the pause, alone: elected again");
        long term2 = e.term().orElseThrow();
        assertTrue(term2 > term);
        heldDuringRevoke.set(null);
        e.close();
        assertTrue(heldDuringRevoke.get(), "onRevoked(CLOSED) ran while the lock was still held");
        assertEquals(List.of("elected:" + term, "revoked:RESIGNED", "elected:" + term2, "revoked:CLOSED"), recorder.calls);
        assertTrue(other.lock("alternate").tryAcquire().isPresent(), "close() released the lock");
    }

    @Test
    void aThrowingListenerDoesNotStopTheElection() throws Exception {
        LockClient c = client();
        List<String> calls = new CopyOnWriteArrayList<>();
        LeaderElection e = election(c, "throwing", new ElectionListener() {
            @Override
            public void onElected(long term) {
                calls.add("elected");
                throw new IllegalStateException("listener bug");
            }

            @Override
            public void onRevoked(RevokeReason reason) {
                calls.add("revoked");
                throw new IllegalStateException("listener bug");
            }
        }).start();
        assertTrue(await(e::isLeader, PROMPT), "leads despite the throwing onElected");
        assertTrue(e.resign(), "resign() returns normally despite the throwing onRevoked");
        assertTrue(await(() -> calls.size() >= 3, PROMPT), "elected again: " + calls);
        assertEquals(List.of("elected", "revoked", "elected"), calls.subList(0, 3));
    }

    @Test
    void closeFromInsideACallbackWorksAndLeaksNoThread() throws Exception {
        Set<String> before = electionThreads();
        LockClient c = client();
        AtomicReference<LeaderElection> self = new AtomicReference<>();
        Recorder recorder = new Recorder() {
            @Override
            public void onElected(long term) {
                super.onElected(term);
                self.get().close(); // on the election's own thread: must not wait for itself
            }
        };
        LeaderElection e = election(c, "self-closing", recorder);
        self.set(e);
        e.start();
        assertTrue(await(() -> recorder.calls.size() == 2, PROMPT), "elected then closed: " + recorder.calls);
        assertTrue(recorder.calls.get(1).equals("revoked:CLOSED"), recorder.calls.toString());
        assertFalse(e.isLeader());
        assertTrue(await(() -> electionThreads().equals(before), PROMPT), "the election's thread ended: " + electionThreads());
        assertTrue(client().lock("self-closing").tryAcquire().isPresent(), "the lock was released");
    }

    @Test
    void aClientClosedUnderALeaderIsReportedAsLost() throws Exception {
        Set<String> before = electionThreads();
        LockClient c = client();
        Recorder recorder = new Recorder();
        LeaderElection e = election(c, "client-closed", recorder).start();
        assertTrue(await(e::isLeader, PROMPT));
        c.close(); // releases the lease without telling the election: it must notice by itself
        assertTrue(await(() -> recorder.calls.contains("revoked:LOST"), PROMPT), recorder.calls.toString());
        assertFalse(e.isLeader());
        // the thread finds the client closed and ends; close() stays harmless
        assertTrue(await(() -> electionThreads().equals(before), PROMPT), "thread ended: " + electionThreads());
        e.close();
        assertEquals(2, recorder.calls.size(), recorder.calls.toString());
    }

    @Test
    void aWaitingCandidateIsClosedPromptly() throws Exception {
        LockClient a = client();
        LockClient b = client();
        LeaderElection leader = election(a, "prompt-close", ElectionListener.NONE).start();
        assertTrue(await(leader::isLeader, PROMPT));
        Recorder recorder = new Recorder();
        LeaderElection waiting = election(b, "prompt-close", recorder).start();
        Thread.sleep(200); // inside its wait for the lock
        long start = System.nanoTime();
        waiting.close();
        long took = System.nanoTime() - start;
        // the wait is interrupted rather than sliced out: well under the 5 s slice
        assertTrue(took < Duration.ofSeconds(2).toNanos(), "close() took " + took / 1_000_000 + " ms");
        assertTrue(recorder.calls.isEmpty(), "never elected, never revoked: " + recorder.calls);
        leader.close();
        Thread.sleep(300);
        assertFalse(waiting.isLeader(), "a closed candidate is not elected when the lock frees");
    }
}
