package io.dlock.micrometer;

import static io.dlock.micrometer.MemMetricsTest.waitFor;
import static io.dlock.micrometer.MicrometerLockListener.ACQUIRE;
import static io.dlock.micrometer.MicrometerLockListener.HELD;
import static io.dlock.micrometer.MicrometerLockListener.HOLD;
import static io.dlock.micrometer.MicrometerLockListener.LOST;
import static io.dlock.micrometer.MicrometerLockListener.RENEWALS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The meters and the log lines against a real {@code redis-server} that requires a password: a
 * lease whose renewals fail while the server is paused (SIGSTOP) expires, and the log says so
 * without ever showing the password.
 */
class RedisMetricsTest {

    private static final String PASSWORD = "pw-" + UUID.randomUUID();
    private static final LockOptions LEASE = LockOptions.builder().leaseTime(Duration.ofMillis(1500)).build();

    private RedisProcess redis;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @BeforeEach
    void startRedis() throws Exception {
        redis = RedisProcess.start("--requirepass", PASSWORD);
        // a fresh server refuses grants for one lock-delay (it cannot tell a first start from a restart that lost
        // its locks): wait that out once, outside the meters and the captured log
        try (LockClient warmUp = LockClient.open(uri())) {
            warmUp.lock("warm-up", LEASE).tryAcquire(LOCK_DELAY.plusSeconds(20)).orElseThrow().release();
        }
    }

    /** The lock-delay covers the longest lease here (3 s); a short one keeps the wait above short. */
    private static final Duration LOCK_DELAY = Duration.ofSeconds(3);

    private String uri() {
        return "redis://:" + PASSWORD + "@127.0.0.1:" + redis.port() + "?lockDelay=" + LOCK_DELAY;
    }

    @AfterEach
    void stopRedis() throws Exception {
        redis.close();
    }

    private LockClient open() {
        return LockClient.open(LockClientConfig.builder(uri())
                // no lease longer than the lock-delay
                .defaultLockOptions(LockOptions.builder().leaseTime(LOCK_DELAY).build())
                .listener(MicrometerLockListener.create(registry))
                .operationTimeout(Duration.ofMillis(300))
                .retry(Duration.ofMillis(5), Duration.ofMillis(50))
                .build());
    }

    private double count(String name, String... tags) {
        return registry.get(name).tags("backend", "redis").tags(tags).meter().measure().iterator().next().getValue();
    }

    @Test
    void metersAndLogLinesOfAcquiresRenewalsARecoveryAndAnExpiredLease() throws Exception {
        String log;
        long token;
        try (StderrCapture capture = new StderrCapture(); LockClient a = open(); LockClient b = open()) {
            Lease order = a.lock("payment:order-42", LEASE).tryAcquire().orElseThrow();
            assertEquals(Optional.empty(), b.lock("payment:order-42").tryAcquire());
            assertEquals(Optional.empty(), b.lock("payment:order-42").tryAcquire(Duration.ofMillis(100)));
            waitFor("two renewals (every 500 ms)", () -> count(RENEWALS, "result", "success") >= 2);
            assertEquals(1, registry.get(HELD).tags("backend", "redis").gauge().value());
            order.release();

            assertEquals(1, registry.get(ACQUIRE).tags("backend", "redis", "outcome", "acquired").timer().count());
            assertEquals(1, registry.get(ACQUIRE).tags("outcome", "contended").timer().count());
            assertEquals(1, registry.get(ACQUIRE).tags("outcome", "timed_out").timer().count());
            assertTrue(registry.get(ACQUIRE).tags("outcome", "timed_out").timer().totalTime(TimeUnit.MILLISECONDS) >= 100);
            assertEquals(1, registry.get(HOLD).tags("backend", "redis").timer().count());
            assertTrue(registry.get(HOLD).timer().totalTime(TimeUnit.MILLISECONDS) >= 1000);
            assertEquals(0, count(RENEWALS, "result", "failure"));
            assertTrue(capture.lines("WARN").isEmpty(), "nothing to warn about yet: " + capture.text());
            assertTrue(capture.lines("INFO").isEmpty(), "no INFO line for operations that succeed: " + capture.text());

            // a pause shorter than the validity (2950 ms): the renewal due at 1000 ms times out at
            // 1300 ms, retries follow every 250 ms, and one succeeds once the server runs again at 2000 ms
            Lease report = a.lock("report", LockOptions.builder().leaseTime(Duration.ofSeconds(3)).build())
                    .tryAcquire().orElseThrow();
            redis.pause();
            try {
                Thread.sleep(2000);
            } finally {
                redis.resume();
            }
            waitFor("the recovery logged", () -> capture.lines("INFO").size() == 1);
            assertTrue(report.isValid());
            assertTrue(LogLines.renewalFailed("report", Long.toString(report.fencingToken())).matcher(
                    capture.lines("WARN").get(0)).matches(), capture.text());
            assertTrue(LogLines.renewalRecovered("report", Long.toString(report.fencingToken())).matcher(
                    capture.lines("INFO").get(0)).matches(), capture.text());
            report.release();
            double failuresBefore = count(RENEWALS, "result", "failure");
            assertTrue(failuresBefore >= 1);

            Lease job = a.lock("nightly-job", LEASE).tryAcquire().orElseThrow();
            token = job.fencingToken();
            redis.pause();
            try {
                waitFor("the lease expired", () -> !job.isValid());
            } finally {
                redis.resume();
            }
            waitFor("the loss counted", () -> count(LOST, "reason", "expired") == 1);
            assertTrue(count(RENEWALS, "result", "failure") > failuresBefore);
            assertEquals(0, registry.get(HELD).tags("backend", "redis").gauge().value());
            log = capture.text();

            // one warning for the renewal failure streak, one for the loss (and maybe one for a
            // best-effort release sent while the server was still paused)
            List<String> warnings = capture.lines("WARN").stream()
                    .filter(l -> l.contains("lock 'nightly-job'"))
                    .collect(Collectors.toList());
            assertEquals(2, warnings.size(), log);
            assertTrue(LogLines.renewalFailed("nightly-job", Long.toString(token)).matcher(warnings.get(0)).matches(),
                    warnings.get(0));
            assertTrue(warnings.get(0).contains("retrying every 125 ms until then; cause: LockBackendException: "),
                    warnings.get(0));
            assertTrue(LogLines.leaseLost("nightly-job", Long.toString(token), "EXPIRED").matcher(warnings.get(1))
                    .matches(), warnings.get(1));
            assertTrue(warnings.get(1).matches(".*, 0 ms of validity left \\(lease time 1500 ms, held for \\d+ ms\\); "
                    + "cause: renewal failing for \\d+ ms \\(\\d+ attempt\\(s\\)\\), last: LockBackendException: .+"),
                    warnings.get(1));
        }
        assertFalse(log.contains(PASSWORD), log);
    }

    /** Captures what slf4j-simple writes to System.err (it looks System.err up on every write). */
    static final class StderrCapture implements AutoCloseable {
        private final PrintStream original = System.err;
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        StderrCapture() {
            System.setErr(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        }

        String text() {
            System.err.flush();
            return bytes.toString(StandardCharsets.UTF_8);
        }

        /** @return the lines logged at a level, e.g. {@code WARN} (not stack trace lines) */
        List<String> lines(String level) {
            return text().lines().filter(l -> l.matches("^\\[[^\\]]*\\] " + level + " .*")).collect(Collectors.toList());
        }

        @Override
        public void close() {
            System.setErr(original);
            original.print(text());
        }
    }
}
