package io.dlock.dynamodb;

import io.dlock.tck.TestTiming;

import static io.dlock.tck.TestTiming.assertThrowsWithin;
import static io.dlock.dynamodb.TestSupport.everything;
import static io.dlock.dynamodb.TestSupport.newTable;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.tck.ServerProcesses;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.http.SdkHttpResponse;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;

/**
 * The table and the credentials against DynamoDB Local: createTable on and off, a table with the
 * wrong key, the message for a missing permission, credentials from the URI, a profile and the
 * SDK's default chain, and that no credential ever shows in a message, a stack trace or the log.
 * Each configuration failure is a {@link LockConfigurationException} of its kind (a missing
 * table, the wrong key, a denied action, no credentials, an https endpoint that speaks plain
 * http); an unreachable endpoint is retryable.
 */
class DynamoDbSetupTest {

    private static final Duration FAIL_BOUND = Duration.ofMillis(2500);
    private static final String KEY_ID = "AKIADLOCKSETUPKEY001";
    private static final String SECRET = "Setup-S3cret-Value-42";

    private static DynamoDbLocal server;

    @BeforeAll
    static void start() {
        server = DynamoDbLocal.start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static String uri(String table, String extra) {
        return "dynamodb://" + table + "?region=us-east-1&endpoint=" + server.endpoint() + extra;
    }

    private static String withKeys(String table) {
        return uri(table, "&accessKeyId=" + KEY_ID + "&secretAccessKey=" + SECRET);
    }

    private static LockClient open(String uri) {
        return LockClient.open(LockClientConfig.builder(uri).operationTimeout(Duration.ofSeconds(1)).build());
    }

    private static Optional<TableDescription> describe(String table) {
        try (DynamoDbClient c = server.sdkClient(Duration.ofSeconds(5))) {
            return c.listTables().tableNames().contains(table)
                    ? Optional.of(c.describeTable(b -> b.tableName(table)).table()) : Optional.empty();
        }
    }

    @Test
    void withoutCreateTableAMissingTableFailsNamingItAndTheFix() {
        String table = newTable("missing");
        try (LockClient c = open(withKeys(table))) {
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                    () -> c.lock("x").tryAcquire(Duration.ofSeconds(5)));
            assertTrue(e.getMessage().contains("the table '" + table + "' does not exist"), e.getMessage());
            assertTrue(e.getMessage().contains("createTable=true"), e.getMessage());
            assertTrue(e.getMessage().contains("partition key named 'name' of type String"), e.getMessage());
            assertFalse(everything(e).contains(SECRET), everything(e));
            assertFalse(everything(e).contains(KEY_ID), everything(e));
            assertConfiguration(Kind.MISSING_RESOURCE, e);
            assertConfiguration(Kind.MISSING_RESOURCE, assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                    () -> c.holder("x")));
        }
        assertEquals(Optional.empty(), describe(table), "nothing was created");
    }

    @Test
    void createTableMakesTheTableOnceAndAgainIsHarmless() throws Exception {
        String table = newTable("created");
        // two clients at once: one creates it, the other finds it being created, both wait until it is active
        CompletableFuture<LockClient> first = CompletableFuture.supplyAsync(() -> open(withKeys(table) + "&createTable=true"));
        CompletableFuture<LockClient> second = CompletableFuture.supplyAsync(() -> open(withKeys(table) + "&createTable=true"));
        try (LockClient a = first.get(); LockClient b = second.get()) {
            Lease lease = a.lock("made").tryAcquire().orElseThrow();
            assertTrue(b.lock("made").tryAcquire().isEmpty());
            lease.release();
        }
        TableDescription d = describe(table).orElseThrow();
        assertEquals(1, d.keySchema().size());
        assertEquals("name", d.keySchema().get(0).attributeName());
        assertEquals(KeyType.HASH, d.keySchema().get(0).keyType());
        assertEquals(ScalarAttributeType.S, d.attributeDefinitions().get(0).attributeType());
        assertEquals(BillingMode.PAY_PER_REQUEST, d.billingModeSummary().billingMode());
        try (LockClient again = open(withKeys(table) + "&createTable=true")) {
            again.lock("made").tryAcquire().orElseThrow().release();
        }
    }

    @Test
    void aTableWithAnotherKeyIsRefusedClearly() {
        String table = newTable("wrongkey");
        try (DynamoDbClient c = server.sdkClient(Duration.ofSeconds(5))) {
            c.createTable(b -> b.tableName(table).billingMode(BillingMode.PAY_PER_REQUEST)
                    .keySchema(k -> k.attributeName("id").keyType(KeyType.HASH))
                    .attributeDefinitions(a -> a.attributeName("id").attributeType(ScalarAttributeType.S)));
        }
        LockBackendException atOpen = assertThrows(LockBackendException.class,
                () -> open(withKeys(table) + "&createTable=true").close());
        assertTrue(atOpen.getMessage().contains("exists but its key is"), atOpen.getMessage());
        assertTrue(atOpen.getMessage().contains("partition key named 'name'"), atOpen.getMessage());
        assertConfiguration(Kind.INCOMPATIBLE_SERVER, atOpen);
        try (LockClient c = open(withKeys(table))) {
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                    () -> c.lock("x").tryAcquire());
            assertTrue(e.getMessage().contains("rejected the request"), e.getMessage());
            assertTrue(e.getMessage().contains("partition key named 'name' of type String"), e.getMessage());
            assertConfiguration(Kind.INCOMPATIBLE_SERVER, e);
        }
    }

    @Test
    void anHttpsEndpointThatSpeaksPlainHttpIsATlsFailure() {
        String https = withKeys(newTable("tls")).replace("endpoint=http://", "endpoint=https://");
        try (LockClient c = open(https)) {
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                    () -> c.lock("x").tryAcquire(Duration.ofSeconds(5)));
            System.out.println("[dlock-dynamodb] https to DynamoDB Local's http: " + e.getMessage());
            assertConfiguration(Kind.TLS, e);
            assertFalse(everything(e).contains(SECRET), everything(e));
        }
    }

    @Test
    void anUnreachableEndpointIsATransientFailure() {
        String nowhere = "dynamodb://" + newTable("nowhere") + "?region=us-east-1&endpoint=http://127.0.0.1:"
                + ServerProcesses.freeLoopbackPort() + "&accessKeyId=" + KEY_ID + "&secretAccessKey=" + SECRET;
        try (LockClient c = open(nowhere)) {
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                    () -> c.lock("x").tryAcquire(Duration.ofSeconds(5)));
            assertFalse(e instanceof LockConfigurationException, e.toString());
            assertTrue(e.retryable(), e.toString());
        }
    }

    private static void assertConfiguration(Kind kind, LockBackendException e) {
        assertTrue(e instanceof LockConfigurationException, "not a configuration failure: " + everything(e));
        assertEquals(kind, ((LockConfigurationException) e).kind(), e.getMessage());
        assertFalse(e.retryable());
    }

    /** Answers every request of one action as IAM would when the policy lacks it. */
    private static final class DenyAction implements ExecutionInterceptor {
        private final String action;

        DenyAction(String action) {
            this.action = action;
        }

        private boolean applies(ExecutionAttributes attributes) {
            return action.equals(attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME));
        }

        @Override
        public SdkHttpResponse modifyHttpResponse(Context.ModifyHttpResponse context, ExecutionAttributes attributes) {
            if (!applies(attributes)) {
                return context.httpResponse();
            }
            return context.httpResponse().toBuilder().statusCode(400).statusText("Bad Request")
                    .removeHeader("x-amz-crc32").removeHeader("Content-Length")
                    .putHeader("x-amzn-ErrorType", "AccessDeniedException").build();
        }

        @Override
        public Optional<InputStream> modifyHttpResponseContent(Context.ModifyHttpResponse context,
                                                               ExecutionAttributes attributes) {
            if (!applies(attributes)) {
                return context.responseBody();
            }
            String body = "{\"__type\":\"com.amazon.coral.service#AccessDeniedException\",\"Message\":\"User: "
                    + "arn:aws:iam::123456789012:user/app is not authorized to perform: dynamodb:" + action
                    + " on resource: arn:aws:dynamodb:us-east-1:123456789012:table/locks because no identity-based "
                    + "policy allows the dynamodb:" + action + " action\"}";
            return Optional.of(new ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8)));
        }
    }

    @Test
    void aMissingPermissionIsNamed() {
        String table = newTable("denied");
        try (LockClient setup = open(withKeys(table) + "&createTable=true")) {
            assertTrue(setup.holder("x").isEmpty());
        }
        LockClientConfig config = LockClientConfig.builder(withKeys(table)).operationTimeout(Duration.ofSeconds(1)).build();
        try (LockClient c = LockClient.open(config, TestSupport.countingProviderWith(new DenyAction("UpdateItem")))) {
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                    () -> c.lock("x").tryAcquire());
            assertTrue(e.getMessage().contains("not allowed dynamodb:UpdateItem on table '" + table + "'"), e.getMessage());
            assertTrue(e.getMessage().contains("dlock needs dynamodb:UpdateItem and dynamodb:GetItem"), e.getMessage());
            assertFalse(everything(e).contains(SECRET), everything(e));
            assertConfiguration(Kind.PERMISSION, e);
        }
        try (LockClient c = LockClient.open(config, TestSupport.countingProviderWith(new DenyAction("GetItem")))) {
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND, () -> c.holder("x"));
            assertTrue(e.getMessage().contains("not allowed dynamodb:GetItem"), e.getMessage());
        }
    }

    @Test
    void credentialsComeFromTheUriAProfileOrTheDefaultChainAndAreNeverShown() throws Exception {
        String table = newTable("creds");
        PrintStream original = System.err;
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        List<String> shown = new ArrayList<>();
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
        try {
            try (LockClient c = open(withKeys(table) + "&createTable=true&sessionToken=Sess1onT0ken")) {
                Lease lease = c.lock("creds").tryAcquire().orElseThrow();
                shown.add(c.toString());
                shown.add(c.config().toString());
                shown.add(String.valueOf(c.holder("creds")));
                lease.release();
            }
            // a failure that logs (a release that cannot reach the server) and one that throws
            try (LockClient c = open(withKeys(table))) {
                Lease lease = c.lock("creds-logged").tryAcquire().orElseThrow();
                server.pause();
                try {
                    lease.release();
                    shown.add(everything(assertThrows(LockBackendException.class, () -> c.holder("creds-logged"))));
                } finally {
                    server.resume();
                }
            }
            try (LockClient c = open(withKeys(newTable("nothere")))) {
                shown.add(everything(assertThrows(LockBackendException.class, () -> c.lock("x").tryAcquire())));
            }
        } finally {
            System.setErr(original);
        }
        shown.add(log.toString(StandardCharsets.UTF_8));
        original.print(log.toString(StandardCharsets.UTF_8));
        assertTrue(shown.get(shown.size() - 1).contains("release of lock 'creds-logged'"), "the failed release was logged");
        for (String s : shown) {
            assertFalse(s.contains(SECRET), s);
            assertFalse(s.contains(KEY_ID), s);
            assertFalse(s.contains("Sess1onT0ken"), s);
        }

        // a profile that does not exist: a clear failure, in time
        try (LockClient c = open(uri(table, "&profile=dlock-test-no-such-profile"))) {
            LockBackendException e = assertThrowsWithin(LockBackendException.class, FAIL_BOUND,
                    () -> c.lock("x").tryAcquire());
            assertTrue(e.getMessage().contains("no usable AWS credentials"), e.getMessage());
            assertConfiguration(Kind.CREDENTIALS, e);
        }
        // the SDK's default chain: its first link reads these system properties
        System.setProperty("aws.accessKeyId", KEY_ID);
        System.setProperty("aws.secretAccessKey", SECRET);
        try (LockClient c = open(uri(table, ""))) {
            c.lock("default-chain").tryAcquire().orElseThrow().release();
        } finally {
            System.clearProperty("aws.accessKeyId");
            System.clearProperty("aws.secretAccessKey");
        }
    }
}
