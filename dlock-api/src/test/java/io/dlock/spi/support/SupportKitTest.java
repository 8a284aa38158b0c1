package io.dlock.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.spi.BackendUri;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SupportKitTest {

    private static final String SECRET = "hunter2secret";

    enum Mode { FAST, SAFE }

    private static UriReader reader(String uri, String... known) {
        return UriReader.of(BackendUri.parse(uri), "dlock-test", Set.of(known));
    }

    private static void rejects(String part, Runnable r) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, r::run);
        assertTrue(e.getMessage().contains(part), "'" + part + "' not named in: " + e.getMessage());
        assertFalse(e.getMessage().contains(SECRET), e.getMessage());
    }

    @Test
    void unknownParametersAreAllNamedWithTheKnownOnes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> reader("x://h?zeta=1&alpha=2&prefix=p&password=" + SECRET, "prefix"));
        assertTrue(e.getMessage().contains("'alpha', 'password', 'zeta'"), e.getMessage());
        assertTrue(e.getMessage().contains("unknown to dlock-test (known: prefix)"), e.getMessage());
        assertFalse(e.getMessage().contains(SECRET), e.getMessage());
        rejects("uri", () -> UriReader.of(null, "b", Set.of()));
        rejects("backend", () -> UriReader.of(BackendUri.parse("x://h"), " ", Set.of()));
        rejects("known", () -> UriReader.of(BackendUri.parse("x://h"), "b", null));
    }

    @Test
    void schemeHostsAndPath() {
        assertEquals("xs", reader("xs://h").scheme("x", "xs"));
        rejects("scheme must be x or xs, was 'y'", () -> reader("y://h").scheme("x", "xs"));
        List<BackendUri.HostPort> hosts = reader("x://a,b:7,[::1]:8").hosts(5, 3, "x://host");
        assertEquals(List.of(new BackendUri.HostPort("a", 5), new BackendUri.HostPort("b", 7),
                new BackendUri.HostPort("::1", 8)), hosts);
        assertEquals("[::1]:8", UriReader.authority(hosts.get(2)));
        assertEquals("a:5", UriReader.authority(hosts.get(0)));
        rejects("at most 2 hosts", () -> reader("x://a,b,c").hosts(5, 2, "x://host"));
        rejects("port must be 1 to 65535", () -> reader("x://a:0").hosts(5, 2, "x://host"));
        reader("x://h/").noPath("no path");
        rejects("path '/db'", () -> reader("x://h/db").noPath("no path"));
    }

    @Test
    void credentialsNeverEchoASecret() {
        assertEquals(Optional.empty(), reader("x://h").credentials(false, "hint"));
        UriReader.Credentials c = reader("x://u:" + SECRET + "@h").credentials(false, "hint").orElseThrow();
        assertEquals("u", c.user());
        assertEquals(SECRET, c.password());
        assertFalse(c.toString().contains(SECRET), c.toString());
        assertEquals(SECRET, reader("x://:" + SECRET + "@h").credentials(true, "hint").orElseThrow().password());
        rejects("user is missing", () -> reader("x://:" + SECRET + "@h").credentials(false, "hint"));
        // a password written without the ':' lands in the user slot: never echoed
        rejects("no ':'", () -> reader("x://" + SECRET + "@h").credentials(true, "hint"));
        rejects("password is empty", () -> reader("x://u:@h").credentials(false, "hint"));
    }

    @Test
    void typedParameters(@TempDir Path dir) throws Exception {
        UriReader r = reader("x://h?n=7&f&g=false&d=PT2S&z=0&m=safe&t=v&empty=&file=" + dir.resolve("f"),
                "n", "f", "g", "d", "z", "m", "t", "empty", "file", "bad");
        assertEquals(7, r.integer("n", 1, 0, 10));
        assertEquals(3, r.integer("absent", 3, 0, 10));
        rejects("parameter n must be a number from 8 to 10, was '7'", () -> r.integer("n", 9, 8, 10));
        assertTrue(r.flag("f", false));
        assertFalse(r.flag("g", true));
        assertTrue(r.flag("absent", true));
        assertEquals(Optional.of(Duration.ofSeconds(2)), r.duration("d", Duration.ofSeconds(1), Duration.ofSeconds(3), false));
        assertEquals(Optional.of(Duration.ZERO), r.duration("z", Duration.ofSeconds(1), Duration.ofSeconds(3), true));
        rejects("parameter z must be from", () -> r.duration("z", Duration.ofSeconds(1), Duration.ofSeconds(3), false));
        rejects("parameter d must be 0 or from PT3S", () -> r.duration("d", Duration.ofSeconds(3), Duration.ofSeconds(4), true));
        assertEquals(Mode.SAFE, r.choice("m", Mode.FAST));
        assertEquals(Mode.FAST, r.choice("absent", Mode.FAST));
        rejects("parameter t must be fast, safe, was 'v'", () -> r.choice("t", Mode.FAST));
        assertEquals(Optional.of("v"), r.text("t"));
        assertEquals("dflt", r.text("absent", "dflt"));
        rejects("parameter empty is empty", () -> r.text("empty"));
        rejects("parameter empty must not be empty (default 'dflt')", () -> r.text("empty", "dflt"));
        rejects("parameter file names a file that cannot be read", () -> r.readableFile("file"));
        Files.writeString(dir.resolve("f"), "x");
        assertEquals(Optional.of(dir.resolve("f")), r.readableFile("file"));
        assertEquals(Optional.empty(), r.readableFile("absent"));
    }

    @Test
    void leaseTimesRoundUpAndNeverOverflow() {
        assertEquals(1, LeaseTimes.ceilMillis(Duration.ofNanos(1)));
        assertEquals(5, LeaseTimes.ceilMillis(Duration.ofMillis(5)));
        assertEquals(6, LeaseTimes.ceilMillis(Duration.ofMillis(5).plusNanos(1)));
        assertEquals(Long.MAX_VALUE, LeaseTimes.ceilMillis(Duration.ofSeconds(Long.MAX_VALUE)));
        assertEquals(1, LeaseTimes.ceilSeconds(Duration.ofMillis(10)));
        assertEquals(2, LeaseTimes.ceilSeconds(Duration.ofSeconds(2)));
        assertEquals(3, LeaseTimes.ceilSeconds(Duration.ofMillis(2001)));
        assertEquals(Long.MAX_VALUE / 4, LeaseTimes.saturatedNanos(Duration.ofDays(365 * 1000L)));
        assertEquals(0, LeaseTimes.saturatedNanos(Duration.ZERO));
        rejects("lease must be positive", () -> LeaseTimes.ceilMillis(Duration.ZERO));
        rejects("lease must be positive", () -> LeaseTimes.ceilSeconds(null));
        rejects("d must be zero or positive", () -> LeaseTimes.saturatedNanos(Duration.ofMillis(-1)));
    }

    @Test
    void abandonBudgetIsAQuarterOfTheTimeoutButAtLeastARoundTrip() {
        Duration rt = Duration.ofMillis(50);
        assertEquals(Duration.ofSeconds(1), LeaseTimes.abandonBudget(Duration.ofSeconds(4), rt));
        assertEquals(rt, LeaseTimes.abandonBudget(Duration.ofMillis(100), rt));
        assertEquals(Duration.ofMillis(20), LeaseTimes.abandonBudget(Duration.ofMillis(20), rt));
        rejects("roundTrip must be positive", () -> LeaseTimes.abandonBudget(Duration.ofSeconds(1), Duration.ZERO));
        rejects("operationTimeout must be positive", () -> LeaseTimes.abandonBudget(null, rt));
    }

    @Test
    void idsAreRandomHex() {
        String a = Ids.ownerId();
        assertTrue(a.matches("[0-9a-f]{32}"), a);
        assertNotEquals(a, Ids.ownerId());
        assertTrue(Ids.randomHex(8).matches("[0-9a-f]{16}"));
        rejects("bytes must be 1 to 64", () -> Ids.randomHex(0));
        rejects("bytes must be 1 to 64", () -> Ids.randomHex(65));
    }

    @Test
    void addressProbeTellsRefusedFromAcceptedAndUnresolved() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = s.getLocalPort(); // nothing listens there once it is closed (a test's usual closed port)
        }
        try (ServerSocket open = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            BackendUri.HostPort refused = new BackendUri.HostPort("127.0.0.1", closed);
            BackendUri.HostPort accepts = new BackendUri.HostPort("127.0.0.1", open.getLocalPort());
            BackendUri.HostPort unresolved = new BackendUri.HostPort("no-such-host.invalid", 1);
            Duration budget = Duration.ofSeconds(2); // loopback answers at once; generous for a loaded machine
            List<AddressProbe.Finding> found = AddressProbe.probe(List.of(refused, accepts, unresolved), budget);
            assertEquals(List.of(AddressProbe.Kind.REFUSED, AddressProbe.Kind.ACCEPTS, AddressProbe.Kind.UNRESOLVED),
                    found.stream().map(AddressProbe.Finding::kind).toList());
            assertEquals(refused, found.get(0).address());
            assertEquals("no etcd answered at 127.0.0.1:" + closed + ": nothing listens there (connection refused); "
                    + "check the host, the port and that the server runs", found.get(0).describe("etcd"));
            assertTrue(found.get(1).describe("ZooKeeper").contains("something there accepts TCP connections but did "
                    + "not complete a ZooKeeper handshake"), found.get(1).describe("ZooKeeper"));
            assertEquals("the host name of no-such-host.invalid:1 does not resolve; check the host",
                    found.get(2).describe("etcd"));
            assertFalse(AddressProbe.nothingListens(found), "something listens at one of them");
            assertTrue(AddressProbe.nothingListens(List.of(found.get(0), found.get(2))));
            assertFalse(AddressProbe.nothingListens(List.of()), "no address is no evidence");
        }
        rejects("addresses", () -> AddressProbe.probe(null, Duration.ZERO));
        rejects("addresses must each have a port", () -> AddressProbe.probe(
                List.of(new BackendUri.HostPort("h", -1)), Duration.ZERO));
        rejects("budget", () -> AddressProbe.probe(List.of(), Duration.ofMillis(-1)));
        rejects("findings", () -> AddressProbe.nothingListens(null));
        rejects("service", () -> new AddressProbe.Finding(new BackendUri.HostPort("h", 1), AddressProbe.Kind.REFUSED,
                "", Duration.ZERO).describe(" "));
    }
}
