package io.dlock.dynamodb;

import static io.dlock.tck.SpiAnswers.*;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LostReason;
import io.dlock.Ticker;
import io.dlock.dynamodb.internal.DynamoDbLockBackend;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.BackendUri;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockProvider;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.function.Executable;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** Helpers shared by the DynamoDB tests. */
final class TestSupport {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final AtomicInteger THREADS = new AtomicInteger();
    private static final AtomicInteger TABLES = new AtomicInteger();

    private TestSupport() { }

    static final BackendEvents NO_EVENTS = new BackendEvents() {
        @Override
        public void allLeasesLost(LostReason reason) {
        }

        @Override
        public void leaseLost(String ownerId, LostReason reason) {
        }
    };

    /**
     * Counts the HTTP requests the SDK sends, by DynamoDB action (retries count again): the
     * interceptor runs just before each transmission.
     */
    static final class RequestCounter implements ExecutionInterceptor {
        private final Map<String, AtomicLong> byAction = new ConcurrentHashMap<>();

        @Override
        public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
            String action = attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME);
            byAction.computeIfAbsent(action, k -> new AtomicLong()).incrementAndGet();
        }

        long total() {
            return byAction.values().stream().mapToLong(AtomicLong::get).sum();
        }

        long of(String action) {
            AtomicLong n = byAction.get(action);
            return n == null ? 0 : n.get();
        }

        void reset() {
            byAction.clear();
        }

        @Override
        public String toString() {
            return byAction.toString();
        }
    }

    /** The DynamoDB provider, opened with a request counter in its SDK client. */
    static LockProvider countingProvider(RequestCounter counter) {
        return countingProviderWith(counter);
    }

    /** The DynamoDB provider, opened with an interceptor in its SDK client. */
    static LockProvider countingProviderWith(ExecutionInterceptor interceptor) {
        return new LockProvider() {
            @Override
            public String name() {
                return "dynamodb";
            }

            @Override
            public Set<String> schemes() {
                return Set.of("dynamodb");
            }

            @Override
            public LockBackend<Void> open(BackendContext context) {
                return DynamoDbLockBackend.open(context, b -> b.addExecutionInterceptor(interceptor));
            }
        };
    }

    /** @return a fresh table name, so that tests do not see each other's items */
    static String newTable(String purpose) {
        return "dlock_" + purpose + "_" + TABLES.incrementAndGet() + "_" + System.nanoTime() % 100_000;
    }

    /**
     * @param server the server
     * @param table the table
     * @return a URI for the table that creates it on first use
     */
    static String uri(DynamoDbLocal server, String table) {
        return DynamoDbFixture.uri(table, DynamoDbLocal.HOST + ":" + server.port()) + "&createTable=true";
    }

    /** A client with a 2 s operation timeout (DynamoDB Local on a loaded machine, see DynamoDbFixture) and quick polling. */
    static LockClient client(String uri, UnaryOperator<LockClientConfig.Builder> customize) {
        return LockClient.open(customize.apply(LockClientConfig.builder(uri).operationTimeout(Duration.ofSeconds(2))
                .retry(Duration.ofMillis(10), Duration.ofMillis(200))).build());
    }

    static LockClient client(String uri) {
        return client(uri, UnaryOperator.identity());
    }

    static String ownerId() {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    static AcquireRequest request(String name, Duration lease) {
        return new AcquireRequest(name, ownerId(), lease);
    }

    /**
     * Opens the backend as the core does, with daemon threads named test-dynamodb-N.
     *
     * @param uri the URI
     * @param operationTimeout the operation timeout
     * @param ticker the monotonic clock
     * @param clock the wall clock
     * @param extra added to the SDK client's configuration (interceptors)
     * @return the backend
     */
    static DynamoDbLockBackend openBackend(String uri, Duration operationTimeout, Ticker ticker, Clock clock,
                                           Consumer<ClientOverrideConfiguration.Builder> extra) {
        LockClientConfig config = LockClientConfig.builder(uri).operationTimeout(operationTimeout).ticker(ticker)
                .clock(clock).build();
        ThreadFactory threads = r -> {
            Thread t = new Thread(r, "test-dynamodb-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        return DynamoDbLockBackend.open(new BackendContext(config, BackendUri.parse(uri), threads, NO_EVENTS), extra);
    }

    static DynamoDbLockBackend openBackend(String uri, Duration operationTimeout) {
        return openBackend(uri, operationTimeout, Ticker.system(), Clock.systemUTC(), b -> { });
    }

    /** Reads an item straight from DynamoDB Local. */
    static Map<String, AttributeValue> item(DynamoDbLocal server, String table, String name) {
        try (DynamoDbClient c = server.sdkClient(Duration.ofSeconds(5))) {
            return c.getItem(b -> b.tableName(table).consistentRead(true)
                    .key(Map.of("name", AttributeValue.fromS(name)))).item();
        }
    }

    /** A ticker tests move by hand. */
    static final class ManualTicker implements Ticker {
        private final AtomicLong now = new AtomicLong(1_000_000_000L);

        @Override
        public long nanoTime() {
            return now.get();
        }

        void advance(Duration d) {
            now.addAndGet(d.toNanos());
        }
    }

    static String everything(Throwable e) {
        StringWriter w = new StringWriter();
        e.printStackTrace(new PrintWriter(w));
        return w.toString();
    }
}
