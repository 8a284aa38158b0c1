package io.dlock.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class BackendUriTest {

    @Test
    void singleHostWithPortAndPath() {
        BackendUri u = BackendUri.parse("redis://127.0.0.1:6379/2");
        assertEquals("redis", u.scheme());
        assertEquals(List.of(new BackendUri.HostPort("127.0.0.1", 6379)), u.hosts());
        assertEquals("/2", u.path());
        assertEquals(Optional.empty(), u.user());
        assertEquals(Optional.empty(), u.password());
        assertEquals(Map.of(), u.params());
        assertEquals("redis://127.0.0.1:6379/2", u.toString());
    }

    @Test
    void multipleHostsSomeWithoutPort() {
        BackendUri u = BackendUri.parse("etcd://h1:2379,h2:2380,h3/prefix");
        assertEquals(List.of(new BackendUri.HostPort("h1", 2379), new BackendUri.HostPort("h2", 2380),
                new BackendUri.HostPort("h3", -1)), u.hosts());
        assertEquals(2379, u.hosts().get(2).portOr(2379));
        assertEquals(2380, u.hosts().get(1).portOr(2379));
        assertEquals("h3", u.hosts().get(2).toString());
        assertEquals("h1:2379", u.hosts().get(0).toString());
        assertEquals("/prefix", u.path());
        assertThrows(UnsupportedOperationException.class, () -> u.hosts().clear());
    }

    @Test
    void ipv6Hosts() {
        BackendUri u = BackendUri.parse("zookeeper://[::1]:2181,[2001:db8::7],10.0.0.1:2182/chroot/app");
        assertEquals(List.of(new BackendUri.HostPort("::1", 2181), new BackendUri.HostPort("2001:db8::7", -1),
                new BackendUri.HostPort("10.0.0.1", 2182)), u.hosts());
        assertEquals("/chroot/app", u.path());
    }

    @Test
    void userAndPasswordArePercentDecoded() {
        BackendUri u = BackendUri.parse("redis://us%40er:p%40ss%3Aw%2Fo+rd%25@cache.local:6380/0");
        assertEquals(Optional.of("us@er"), u.user());
        assertEquals(Optional.of("p@ss:w/o+rd%"), u.password());
        assertEquals(List.of(new BackendUri.HostPort("cache.local", 6380)), u.hosts());
        assertEquals("/0", u.path());
    }

    @Test
    void aPasswordWithoutAUserAndAnUnencodedAtSign() {
        BackendUri u = BackendUri.parse("redis://:pa@ss@host:1");
        assertEquals(Optional.empty(), u.user());
        assertEquals(Optional.of("pa@ss"), u.password());
        assertEquals("host", u.hosts().get(0).host());
        assertFalse(u.toString().contains("pa@ss"), u.toString());
    }

    @Test
    void queryParametersAreDecodedAndKeptInOrder() {
        BackendUri u = BackendUri.parse(
                "dynamodb://locks?region=eu-west-1&endpoint=http%3A%2F%2Flocalhost%3A8000&flag&prefix=a+b&&empty=");
        assertEquals(List.of(new BackendUri.HostPort("locks", -1)), u.hosts());
        assertEquals(List.of("region", "endpoint", "flag", "prefix", "empty"), List.copyOf(u.params().keySet()));
        assertEquals(Optional.of("eu-west-1"), u.param("region"));
        assertEquals(Optional.of("http://localhost:8000"), u.param("endpoint"));
        assertEquals(Optional.of(""), u.param("flag"));
        assertEquals(Optional.of("a+b"), u.param("prefix"));
        assertEquals(Optional.of(""), u.param("empty"));
        assertEquals(Optional.empty(), u.param("missing"));
    }

    @Test
    void theSchemeIsLowerCased() {
        assertEquals("rediss", BackendUri.parse("REDISS://h:1").scheme());
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis://h:99999", "redis://h:65536", "redis://h:-1", "redis://h:abc", "redis://h:",
        "etcd://h1:2379,h2:x", "zk://[::1]:port"})
    void badPortsAreRejectedNamingTheUri(String uri) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BackendUri.parse(uri));
        assertTrue(e.getMessage().startsWith("uri") && e.getMessage().contains("port"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   ", "localhost:6379", "://h", "1redis://h", "re dis://h", "redis://:6379",
        "etcd://h1,,h2", "etcd://h1,", "zk://[::1", "zk://[::1]x",
        "redis://h:1:2", "etcd://fe80::1:2379"})
    void malformedUrisAreRejectedNamingTheUri(String uri) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BackendUri.parse(uri));
        assertTrue(e.getMessage().startsWith("uri"), e.getMessage());
    }

    @Test
    void nullIsRejected() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> BackendUri.parse(null)).getMessage().startsWith("uri"));
    }

    @Test
    void redactHidesThePasswordAndSecretLookingParameters() {
        String r = BackendUri.redact(
                "redis://admin:hunter2@h:6379/0?password=pw1&clientSecret=sec2&authToken=tok3&apiKey=key4&passphrase=pp5&region=eu&db=3");
        for (String secret : new String[] {"hunter2", "pw1", "sec2", "tok3", "key4", "pp5"}) {
            assertFalse(r.contains(secret), secret + " shown in " + r);
        }
        assertEquals("redis://admin:***@h:6379/0?password=***&clientSecret=***&authToken=***&apiKey=***"
                + "&passphrase=***&region=eu&db=3", r);
    }

    @Test
    void redactLeavesUrisWithoutSecretsAlone() {
        for (String uri : new String[] {"etcd://h1:2379,h2:2379", "zk://[::1]:2181/chroot",
            "dynamodb://t?region=eu-west-1", "redis://user@h:1", "not a uri"}) {
            assertEquals(uri, BackendUri.redact(uri));
        }
        assertEquals("null", BackendUri.redact(null));
    }

    @Test
    void toStringIsRedacted() {
        BackendUri u = BackendUri.parse("redis://app:s3cr3t@h:6379?token=abc&region=x");
        assertEquals(Optional.of("s3cr3t"), u.password());
        assertEquals(Optional.of("abc"), u.param("token"));
        assertFalse(u.toString().contains("s3cr3t"), u.toString());
        assertFalse(u.toString().contains("abc"), u.toString());
        assertTrue(u.toString().contains("region=x"), u.toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "redis://default:Ab3/xY9+zz@cache:6379",     // an unencoded '/' in a generated password
        "redis://default:Ab3/9x@cache:6379",
        "redis://default:123/456@cache:6379/0",
        "redis://default:Ab3/xY9zz@cache:bad",
        "redis://default:p%zzSecretPart@cache:6379",   // a broken escape
    })
    void aPasswordNeverShowsEvenInAMalformedUri(String uri) {
        String secret = uri.substring(uri.indexOf("default:") + 8, uri.indexOf('@'));
        assertFalse(BackendUri.redact(uri).contains(secret), BackendUri.redact(uri));
        String shown;
        try {
            shown = BackendUri.parse(uri).toString();
        } catch (IllegalArgumentException e) {
            shown = e.getMessage();
            assertTrue(shown.startsWith("uri"), shown);
        }
        for (String part : secret.split("[/%]")) {
            if (part.length() >= 3) {
                assertFalse(shown.contains(part), "'" + part + "' of the password shown in: " + shown);
            }
        }
    }
}
