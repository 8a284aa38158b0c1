package io.dlock.zookeeper;

import io.dlock.tck.VirtualThreadRun;
import org.junit.jupiter.api.Test;

/** {@value VirtualThreadRun#THREADS} virtual threads through one ZooKeeper client, on Java 21 or later. */
class ZooKeeperVirtualThreadTest {

    @Test
    void tenThousandVirtualThreadsOnAHundredLocks() throws Exception {
        try (org.apache.curator.test.TestingServer zk = ZkServers.standalone()) {
            VirtualThreadRun.check("zookeeper://" + zk.getConnectString());
        }
    }
}
