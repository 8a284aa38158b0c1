package io.dlock.zookeeper.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.spi.BackendUri;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ZkConfigTest {

    private static ZkConfig parse(String uri) {
        return ZkConfig.from(BackendUri.parse(uri));
    }

    @Test
    void defaults() {
        ZkConfig c = parse("zookeeper://zk1");
        assertEquals("zk1:2181", c.connectString);
        assertEquals("/dlock", c.basePath);
        assertEquals(Duration.ofSeconds(30), c.sessionTimeout);
        assertFalse(c.hasCredentials());
    }

    @Test
    void hostsChrootPrefixAndSession() {
        ZkConfig c = parse("zk://h1:2181,h2:2182,[::1]:2183,h4/apps/x/?sessionTimeout=PT10S&prefix=locks/v1");
        assertEquals("h1:2181,h2:2182,[::1]:2183,h4:2181", c.connectString);
        assertEquals("/apps/x/locks/v1", c.basePath);
        assertEquals(Duration.ofSeconds(10), c.sessionTimeout);
        assertEquals(Duration.ofMillis(2500), parse("zk://h?sessionTimeout=2500").sessionTimeout);
    }

    @Test
    void credentialsAreDigestAuthAndStayOutOfMessages() {
        ZkConfig c = parse("zookeeper://alice:s3cr%40t@h1:2181");
        assertTrue(c.hasCredentials());
        assertEquals("alice", c.user);
        assertEquals("s3cr@t", c.password);
        assertFalse(c.shown.contains("s3cr"), c.shown);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> parse("zookeeper://alice:hunter2@h1?bogus=1"));
        assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
        assertTrue(e.getMessage().contains("bogus"), e.getMessage());
    }

    @Test
    void badUrisAreRejectedNamingThePart() {
        assertRejected("zookeeper://", "host");
        assertRejected("zookeeper://h?sessionTimeout=10s", "sessionTimeout");
        assertRejected("zookeeper://h?sessionTimeout=PT0S", "sessionTimeout");
        assertRejected("zookeeper://h?sessionTimeout=-PT1S", "sessionTimeout");
        assertRejected("zookeeper://h?prefix=a//b", "prefix");
        assertRejected("zookeeper://h?prefix=/a", "prefix");
        assertRejected("zookeeper://h?prefix=a/", "prefix");
        assertRejected("zookeeper://h?prefix=a/./b", "prefix");
        assertRejected("zookeeper://h?prefix=zookeeper", "prefix");
        assertRejected("zookeeper://h/zookeeper/x", "chroot");
        assertRejected("zookeeper://h/a//b", "chroot");
        assertRejected("zookeeper://h/a/../b", "chroot");
        assertRejected("zookeeper://alice@h", "password");
        assertRejected("zookeeper://h?sessiontimeout=PT1S", "sessiontimeout");
    }

    @Test
    void noPartOfTheUserInfoShowsInAMessage() {
        String secret = "Zq7Xv9Pw-zk";
        // a password in the user slot, some with characters that would end the host
        for (String uri : new String[] {"zookeeper://" + secret + "@h1:2181", "zookeeper://x" + secret + "/y@h1:2181",
            "zookeeper://" + secret + "?x@h1:2181/chroot"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse(uri), uri);
            assertTrue(e.getMessage().contains("no ':'"), e.getMessage());
            assertFalse(e.getMessage().contains(secret), e.getMessage());
        }
        // the user name is user info too
        for (String uri : new String[] {"zookeeper://" + secret + ":pw@h1?bogus=1", "zookeeper://" + secret + ":pw@h/a//b",
            "zookeeper://a%3A" + secret + ":pw@h1"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse(uri), uri);
            assertFalse(e.getMessage().contains(secret), e.getMessage());
        }
        ZkConfig c = parse("zookeeper://" + secret + ":pw@h1");
        assertFalse(c.shown.contains(secret), c.shown);
    }

    @Test
    void prefixZookeeperIsFineUnderAChroot() {
        assertEquals("/apps/zookeeper", parse("zookeeper://h/apps?prefix=zookeeper").basePath);
        assertNull(parse("zookeeper://h").user);
    }

    private static void assertRejected(String uri, String part) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse(uri), uri);
        assertTrue(e.getMessage().contains(part), "'" + e.getMessage() + "' should name " + part);
    }
}
