package io.dlock.zookeeper.internal;

import io.dlock.zookeeper.ZkServers;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * A test class's embedded ZooKeeper server, a plain Curator client to look at it, and the clients
 * the tests open, closed newest first.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class EmbeddedServerTest {

    TestingServer server;
    CuratorFramework raw;
    final List<AutoCloseable> toClose = new ArrayList<>();

    @BeforeAll
    void startServer() throws Exception {
        server = ZkServers.standalone();
        raw = Harness.raw(server.getPort(), null);
    }

    /** Closes the clients the tests registered in {@link #toClose}, newest first. */
    void closeRegistered() throws Exception {
        Collections.reverse(toClose);
        for (AutoCloseable c : toClose) {
            c.close();
        }
        toClose.clear();
    }

    @AfterAll
    void stopServer() throws Exception {
        closeRegistered();
        raw.close();
        server.close();
    }
}
