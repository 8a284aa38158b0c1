package io.dlock.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
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
    void redactHidesTheUserInfoAndSecretLookingParameters() {
        String r = BackendUri.redact("redis://admin:hunter2@h:6379/0?password=pw1&clientSecret=sec2&authToken=tok3"
                + "&apiKey=key4&passphrase=pp5&pwd=pw6&credentials=cr7&auth=au8&region=eu&db=3");
        for (String secret : new String[] {"admin", "hunter2", "pw1", "sec2", "tok3", "key4", "pp5", "pw6", "cr7", "au8"}) {
            assertFalse(r.contains(secret), secret + " shown in " + r);
        }
        assertEquals("redis://***:***@h:6379/0?password=***&clientSecret=***&authToken=***&apiKey=***"
                + "&passphrase=***&pwd=***&credentials=***&auth=***&region=eu&db=3", r);
        // the shape stays (a user slot, a password slot, either empty), the text never
        assertEquals("redis://***@h:1", BackendUri.redact("redis://user@h:1"));
        assertEquals("redis://:***@h:1", BackendUri.redact("redis://:pw@h:1"));
        assertEquals("redis://***:@h:1", BackendUri.redact("redis://user:@h:1"));
    }

    @Test
    void redactLeavesUrisWithoutSecretsAlone() {
        for (String uri : new String[] {"etcd://h1:2379,h2:2379", "zk://[::1]:2181/chroot",
            "dynamodb://t?region=eu-west-1", "not a uri"}) {
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

    private static final String SECRET = "Zq7Xv9Pw";

    /**
     * User infos that hold a secret (in the user slot, the password slot, or both), some with the
     * characters that end a host or path, unencoded, as generated passwords have them. Whatever the
     * URI becomes, parsed or rejected, no piece of it shows: not in a message, not in toString, and
     * not in a host, path or parameter that a backend could echo.
     */
    @ParameterizedTest
    @ValueSource(strings = {
        "redis://SECRET@h:6379",              // a password written in the user slot
        "redis://SECRET:pw@h:6379",           // the user name itself
        "redis://SE/CRET@h:6379/0",           // an unencoded '/'
        "redis://SE?CRET@h:6379",             // an unencoded '?'
        "redis://u:SE?CRET@h:6379/0?db=1",
        "redis://SE/CRET@h:bad",
        "redis://u:SE/CRET@h:6379/x",
        "zookeeper://SE/CRET@h1:2181,h2/chroot",
        "etcd://SE,CRET:pw@h1:2379",
        "dynamodb://SE/CRET@locks?region=eu-west-1",
        "redis://SE%zzCRET@h:6379",           // a broken escape
    })
    void noPieceOfTheUserInfoShows(String template) {
        String uri = template.replace("SECRET", SECRET);
        String userInfo = template.substring(template.indexOf("://") + 3, template.lastIndexOf('@'))
                .replace("SECRET", SECRET);
        List<String> pieces = new java.util.ArrayList<>();
        for (String piece : userInfo.split("[/?:,%]")) {
            if (piece.length() >= 3 && !piece.equals("pw") && !piece.equals("u")) {
                pieces.add(piece);
            }
        }
        assertFalse(pieces.isEmpty());
        List<String> shown = new java.util.ArrayList<>();
        shown.add(BackendUri.redact(uri));
        try {
            BackendUri u = BackendUri.parse(uri);
            shown.add(u.toString());
            shown.add(u.hosts().toString());
            shown.add(u.path());
            shown.add(u.params().toString());
        } catch (IllegalArgumentException e) {
            shown.add(e.getMessage());
        }
        for (String text : shown) {
            for (String piece : pieces) {
                assertFalse(text.contains(piece), "'" + piece + "' of the user info shown in: " + text);
            }
        }
    }

    @Test
    void theUserInfoRunsToTheLastAtSign() {
        BackendUri u = BackendUri.parse("redis://default:Ab3/xY9?z@cache:6379/2?prefix=p");
        assertEquals(Optional.of("default"), u.user());
        assertEquals(Optional.of("Ab3/xY9?z"), u.password());
        assertEquals(List.of(new BackendUri.HostPort("cache", 6379)), u.hosts());
        assertEquals("/2", u.path());
        assertEquals(Map.of("prefix", "p"), u.params());
        // an '@' in a parameter is written %40
        assertEquals(Optional.of("a@b"), BackendUri.parse("zk://h?prefix=a%40b").param("prefix"));
    }

    @Test
    void scrubRemovesTheUserInfoAndSecretParametersFromAnyText() {
        BackendUri u = BackendUri.parse("redis://alice-user:Zq7Xv9Pw@h:6379?token=Tk4Tk4&region=eu");
        String scrubbed = u.scrub("NOPERM User alice-user has no permissions; pw Zq7Xv9Pw, token Tk4Tk4, region eu");
        assertEquals("NOPERM User *** has no permissions; pw ***, token ***, region eu", scrubbed);
        assertEquals(null, u.scrub(null));
        assertEquals("no secrets here", BackendUri.parse("redis://h").scrub("no secrets here"));
    }

    @Test
    void durationParametersAreIsoOrMillisecondsAndNeverNegative() {
        BackendUri u = BackendUri.parse("redis://:Pw-s3cret@h?a=PT30S&b=2500&c=pt1m&d=0&e=PT0S");
        assertEquals(Optional.of(Duration.ofSeconds(30)), u.durationParam("a"));
        assertEquals(Optional.of(Duration.ofMillis(2500)), u.durationParam("b"));
        assertEquals(Optional.of(Duration.ofMinutes(1)), u.durationParam("c"));
        assertEquals(Optional.of(Duration.ZERO), u.durationParam("d"));
        assertEquals(Optional.of(Duration.ZERO), u.durationParam("e"));
        assertEquals(Optional.empty(), u.durationParam("missing"));
        for (String bad : new String[] {"10s", "-PT1S", "-5", "", "PT", "1.5", "99999999999999999999"}) {
            BackendUri b = BackendUri.parse("redis://:Pw-s3cret@h?lockDelay=" + bad);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.durationParam("lockDelay"),
                    bad);
            assertTrue(e.getMessage().contains("lockDelay"), e.getMessage());
            assertFalse(e.getMessage().contains("Pw-s3cret"), e.getMessage());
        }
    }
}
