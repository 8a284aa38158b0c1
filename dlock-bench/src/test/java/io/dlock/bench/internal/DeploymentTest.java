package io.dlock.bench.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The deployment a fork is given on its command line, and what single-server contenders accept. */
class DeploymentTest {

    @Test
    void aSingleServerIsOneAddressWithoutMasterName() {
        Deployment d = Deployment.parse("127.0.0.1:6379");
        assertFalse(d.multiNode());
        assertEquals(new InetSocketAddress("127.0.0.1", 6379), d.server());
        assertNull(d.masterName());
        assertEquals("127.0.0.1:6379", d.toArgument());
    }

    @Test
    void severalNodesAndAMasterNameGoThroughTheArgumentUnchanged() {
        Deployment d = new Deployment(List.of(new InetSocketAddress("127.0.0.1", 26379),
                new InetSocketAddress("127.0.0.1", 26380), new InetSocketAddress("::1", 26381)), "dlock");
        assertEquals("127.0.0.1:26379,127.0.0.1:26380,[0:0:0:0:0:0:0:1]:26381/dlock", d.toArgument());
        assertEquals(d, Deployment.parse(d.toArgument()));
        assertTrue(d.multiNode());
        assertEquals(List.of("redis://127.0.0.1:26379", "redis://127.0.0.1:26380", "redis://[0:0:0:0:0:0:0:1]:26381"),
                d.redisUris());
        Deployment cluster = Deployment.parse("127.0.0.1:7000,127.0.0.1:7001");
        assertTrue(cluster.multiNode());
        assertEquals("127.0.0.1:7000,127.0.0.1:7001", cluster.hostPorts());
    }

    @Test
    void aSingleServerContenderRefusesSeveralNodes() {
        Contender.OnOneServer c = new io.dlock.bench.internal.peers.CuratorContender();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> c.connect(Deployment.parse("127.0.0.1:1,127.0.0.1:2"), java.time.Duration.ofSeconds(4)));
        assertTrue(e.getMessage().contains("several nodes"), e.getMessage());
    }

    @Test
    void badInputNamesTheParameter() {
        for (String bad : new String[] {null, "", "127.0.0.1", "127.0.0.1:x", "127.0.0.1:0", ":6379", "127.0.0.1:1,",
                "127.0.0.1:1/"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Deployment.parse(bad), bad);
            assertTrue(e.getMessage().startsWith("deployment must") || e.getMessage().startsWith("masterName must"),
                    e.getMessage());
        }
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new Deployment(List.of(), null)).getMessage()
                .startsWith("addresses must"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Deployment.single(null)).getMessage()
                .startsWith("server must"));
    }

    @Test
    void everyBackendNamedOnTheCommandLineIsFoundWithUnderscoreOrHyphen() {
        assertEquals(Backend.REDIS_SENTINEL, Backend.of("redis-sentinel"));
        assertEquals(Backend.REDIS_CLUSTER, Backend.of("redis_cluster"));
        assertEquals(Backend.REDLOCK, Backend.of("Redlock"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Backend.of("sentinel")).getMessage()
                .startsWith("backend must"));
    }
}
