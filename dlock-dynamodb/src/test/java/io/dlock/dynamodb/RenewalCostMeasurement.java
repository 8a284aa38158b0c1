package io.dlock.dynamodb;

import static io.dlock.tck.SpiAnswers.*;

import static io.dlock.dynamodb.TestSupport.newTable;
import static io.dlock.dynamodb.TestSupport.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockClient;
import io.dlock.Ticker;
import io.dlock.dynamodb.internal.DynamoDbLockBackend;
import io.dlock.spi.Grant;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.ConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * What renewing many leases costs, in requests, write capacity units and time, for each renewal
 * mode: one conditional UpdateItem per lease (8 at a time), the same one after another, and
 * TransactWriteItems of up to 100. Not part of the default test run (not named *Test): a
 * measurement, run on demand; it checks only that every lease was renewed.
 *
 * <pre>mvn -pl dlock-dynamodb test -Dtest=RenewalCostMeasurement -Ddlock.tck.reportDir=/tmp/scratch</pre>
 *
 * <p>Write units: "billed" follows DynamoDB's billing rule for what was sent (1 per item update up
 * to 1 KB, 2 per item in a transaction); "reported" is what DynamoDB Local returned as
 * ConsumedCapacity (requested by an interceptor), right for single updates, too low for
 * transactions. Times are on loopback against DynamoDB Local, so they show the shape (round
 * trips), not AWS latency.
 */
class RenewalCostMeasurement {

    /** Asks for, and adds up, the write capacity every UpdateItem and TransactWriteItems consumed. */
    static final class CapacityMeter implements ExecutionInterceptor {
        final AtomicLong requests = new AtomicLong();
        final AtomicLong billed = new AtomicLong();
        private final AtomicLong milliUnits = new AtomicLong();

        @Override
        public SdkRequest modifyRequest(Context.ModifyRequest context, ExecutionAttributes attributes) {
            SdkRequest r = context.request();
            if (r instanceof UpdateItemRequest u) {
                billed.incrementAndGet();
                return u.toBuilder().returnConsumedCapacity(ReturnConsumedCapacity.TOTAL).build();
            }
            if (r instanceof TransactWriteItemsRequest t) {
                billed.addAndGet(2L * t.transactItems().size());
                return t.toBuilder().returnConsumedCapacity(ReturnConsumedCapacity.TOTAL).build();
            }
            return r;
        }

        @Override
        public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
            requests.incrementAndGet();
        }

        @Override
        public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
            if (context.response() instanceof UpdateItemResponse u && u.consumedCapacity() != null) {
                add(u.consumedCapacity());
            } else if (context.response() instanceof TransactWriteItemsResponse t && t.hasConsumedCapacity()) {
                t.consumedCapacity().forEach(this::add);
            }
        }

        private void add(ConsumedCapacity c) {
            if (c.capacityUnits() != null) {
                milliUnits.addAndGet(Math.round(c.capacityUnits() * 1000));
            }
        }

        double units() {
            return milliUnits.get() / 1000.0;
        }

        void reset() {
            requests.set(0);
            billed.set(0);
            milliUnits.set(0);
        }
    }

    @Test
    void measureRenewalCost() throws Exception {
        int passes = 5;
        try (DynamoDbLocal server = DynamoDbLocal.start()) {
            String table = newTable("cost");
            try (LockClient setup = TestSupport.client(TestSupport.uri(server, table))) {
                assertTrue(setup.holder("x").isEmpty());
            }
            String base = DynamoDbFixture.uri(table, DynamoDbLocal.HOST + ":" + server.port());
            StringBuilder report = new StringBuilder(String.format(Locale.ROOT,
                    "%n| leases | mode | requests per pass | write units billed | write units reported | ms per pass (median of %d) |%n"
                            + "|---|---|---|---|---|---|%n", passes));
            for (int n : new int[] {10, 100, 1000}) {
                String[] modes = {"update", "update, one after another", "transaction"};
                for (int m = 0; m < modes.length; m++) {
                    String mode = modes[m];
                    CapacityMeter meter = new CapacityMeter();
                    String uri = base + (mode.equals("transaction") ? "&renewal=transaction" : "");
                    try (DynamoDbLockBackend backend = TestSupport.openBackend(uri, Duration.ofSeconds(30),
                            Ticker.system(), Clock.systemUTC(), b -> b.addExecutionInterceptor(meter))) {
                        List<Grant<Void>> held = new ArrayList<>();
                        for (int i = 0; i < n; i++) {
                            AcquireRequest r = request("cost-" + n + "-" + m + "-" + i, Duration.ofMinutes(5));
                            AttemptResult<Void> g = backend.newAttempt(r).tryOnce();
                            assertTrue(isGranted(g), r.name());
                            held.add(new Grant<Void>(r.name(), r.ownerId(), token(g), r.leaseTime(), null));
                        }
                        long[] millis = new long[passes];
                        long requests = 0;
                        long billed = 0;
                        double units = 0;
                        for (int p = 0; p < passes; p++) {
                            meter.reset();
                            long t0 = System.nanoTime();
                            if (mode.startsWith("update,")) {
                                for (Grant<Void> h : held) {
                                    assertTrue(renewed(backend.renew(List.of(h)))[0]);
                                }
                            } else {
                                for (int from = 0; from < n; from += 256) { // the core's batch size
                                    boolean[] ok = renewed(backend.renew(held.subList(from, Math.min(n, from + 256))));
                                    for (boolean b : ok) {
                                        assertTrue(b);
                                    }
                                }
                            }
                            millis[p] = (System.nanoTime() - t0) / 1_000_000;
                            requests = meter.requests.get();
                            billed = meter.billed.get();
                            units = meter.units();
                        }
                        Arrays.sort(millis);
                        report.append(String.format(Locale.ROOT, "| %d | %s | %d | %d | %.0f | %d |%n", n, mode, requests, billed,
                                units, millis[passes / 2]));
                        if (!mode.equals("transaction")) {
                            assertEquals(n, requests, "one request per lease");
                        }
                    }
                }
            }
            System.out.println("[dynamodb] renewal cost against DynamoDB Local on loopback:" + report);
        }
    }
}
