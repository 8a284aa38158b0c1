package io.dlock.dynamodb;

import static io.dlock.tck.SpiAnswers.*;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Capability;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.spi.LockBackend;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * URI parsing and discovery, without a server: what is accepted (with no I/O), and what is
 * rejected naming the part, never a credential.
 */
class DynamoDbUriTest {

    private static final String KEY_ID = "AKIADLOCKTESTKEYID01";
    private static final String SECRET = "s3cr3t/Key+With=Chars";
    /** Nothing listens on port 1: opening must not touch the endpoint. */
    private static final String NOWHERE = "endpoint=http://127.0.0.1:1";

    private static LockBackend<Void> open(String uri) {
        return TestSupport.openBackend(uri, Duration.ofSeconds(1));
    }

    private static void assertRejected(String uri, String part) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> open(uri).close(), uri);
        assertTrue(e.getMessage().contains(part), "'" + part + "' not named in: " + e.getMessage());
        assertFalse(e.getMessage().contains(SECRET), e.getMessage());
        assertFalse(e.getMessage().contains(KEY_ID), e.getMessage());
    }

    private static String credentials() {
        return "accessKeyId=" + KEY_ID + "&secretAccessKey=" + SECRET.replace("/", "%2F").replace("+", "%2B")
                .replace("=", "%3D");
    }

    @Test
    void providerNamesItsScheme() {
        DynamoDbLockProvider p = new DynamoDbLockProvider();
        assertEquals("dynamodb", p.name());
        assertEquals(Set.of("dynamodb"), p.schemes());
    }

    @Test
    void acceptsGoodUrisWithoutConnecting() {
        for (String uri : new String[] {
                "dynamodb://locks?region=us-east-1&" + NOWHERE,
                "dynamodb://my.lock-table_1?region=eu-west-1&" + NOWHERE + "&" + credentials(),
                "dynamodb://locks/?region=us-east-1&" + NOWHERE + "&" + credentials() + "&sessionToken=tok3n",
                "dynamodb://locks?region=us-east-1&" + NOWHERE + "&profile=dev&renewal=transaction&createTable=false",
                "dynamodb://locks?region=us-east-1&endpoint=https://dynamodb.us-east-1.amazonaws.com&renewal=UPDATE",
                "DYNAMODB://locks?region=us-east-1&" + NOWHERE}) {
            long t0 = System.nanoTime();
            LockBackend<Void> b = open(uri);
            try {
                assertEquals(Set.of(Capability.FENCING, Capability.HOLDER_QUERY), b.capabilities());
                assertEquals(Duration.ofMillis(100), b.minimumLeaseTime());
                assertFalse(b.toString().contains(SECRET), b.toString());
                assertFalse(b.toString().contains(KEY_ID), b.toString());
            } finally {
                b.close();
            }
            // generous: no I/O, only building the SDK client (class loading on the first one)
            assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(5).toNanos(), uri);
        }
    }

    @Test
    void rejectsBadPartsNamingThem() {
        String c = "&" + credentials();
        assertRejected("dynamodb://?region=us-east-1" + c, "table");
        assertRejected("dynamodb://ab?region=us-east-1" + c, "table");
        assertRejected("dynamodb://bad*name?region=us-east-1" + c, "table");
        assertRejected("dynamodb://locks:8000?region=us-east-1" + c, "table");
        assertRejected("dynamodb://locks/extra?region=us-east-1" + c, "table");
        assertRejected("dynamodb://t1,t2?region=us-east-1" + c, "table");
        assertRejected("dynamodb://user:" + KEY_ID + "@locks?region=us-east-1", "user info");
        // credentials written as user info, in either slot: never shown
        assertRejected("dynamodb://" + KEY_ID + ":" + SECRET.replace("/", "%2F") + "@locks?region=us-east-1", "user info");
        assertRejected("dynamodb://" + KEY_ID + "@locks?region=us-east-1", "user info");
        assertRejected("dynamodb://" + SECRET + "@locks?region=us-east-1", "user info");
        assertRejected("dynamodb://locks?region=US_EAST" + c, "region");
        assertRejected("dynamodb://locks?region=us-east-1&endpoint=ftp://h:1" + c, "endpoint");
        assertRejected("dynamodb://locks?region=us-east-1&endpoint=127.0.0.1:8000" + c, "endpoint");
        assertRejected("dynamodb://locks?region=us-east-1&endpoint=http://me:" + SECRET + "@h:1", "endpoint");
        assertRejected("dynamodb://locks?region=us-east-1&createTable=yes" + c, "createTable");
        assertRejected("dynamodb://locks?region=us-east-1&renewal=batch" + c, "renewal");
        assertRejected("dynamodb://locks?region=us-east-1&tabel=x" + c, "tabel");
        assertRejected("dynamodb://locks?region=us-east-1&accessKeyId=" + KEY_ID, "secretAccessKey");
        assertRejected("dynamodb://locks?region=us-east-1&secretAccessKey=" + SECRET, "accessKeyId");
        assertRejected("dynamodb://locks?region=us-east-1&sessionToken=t", "sessionToken");
        assertRejected("dynamodb://locks?region=us-east-1&profile=dev" + c, "profile");
        assertRejected("dynamodb://locks?region=us-east-1&secretAccessKey=&accessKeyId=" + KEY_ID, "secretAccessKey");
        assertRejected("dynamo://locks?region=us-east-1", "scheme");
    }

    @Test
    void aMissingRegionWithNoneConfiguredIsRejected() {
        // the SDK's chain also asks the instance metadata service: off here, so that the test is quick anywhere
        String old = System.setProperty("aws.disableEc2Metadata", "true");
        try {
            if (System.getenv("AWS_REGION") == null && System.getenv("AWS_DEFAULT_REGION") == null
                    && System.getProperty("aws.region") == null) {
                assertRejected("dynamodb://locks?" + NOWHERE + "&profile=dlock-no-such-profile", "region");
            }
            // a region from the SDK's chain (here its system property) is enough
            System.setProperty("aws.region", "eu-central-1");
            open("dynamodb://locks?" + NOWHERE).close();
        } finally {
            System.clearProperty("aws.region");
            if (old == null) {
                System.clearProperty("aws.disableEc2Metadata");
            } else {
                System.setProperty("aws.disableEc2Metadata", old);
            }
        }
    }

    @Test
    void theClientFindsTheProviderAndNeverShowsCredentials() {
        String uri = "dynamodb://locks?region=us-east-1&" + NOWHERE + "&" + credentials();
        try (LockClient c = LockClient.open(LockClientConfig.builder(uri).build())) {
            assertEquals(Set.of(Capability.FENCING, Capability.HOLDER_QUERY), c.capabilities());
            for (String shown : new String[] {c.toString(), c.config().toString()}) {
                assertFalse(shown.contains(SECRET), shown);
                assertFalse(shown.contains(KEY_ID), shown);
            }
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LockClient.open("dynamodb://locks?region=us-east-1&oops=1&" + credentials()));
        assertTrue(e.getMessage().contains("oops"), e.getMessage());
        assertFalse(e.getMessage().contains(SECRET), e.getMessage());
        assertFalse(e.getMessage().contains(KEY_ID), e.getMessage());
    }
}
