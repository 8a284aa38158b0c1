package io.dlock.etcd;

import io.dlock.tck.VirtualThreadRun;
import org.junit.jupiter.api.Test;

/** {@value VirtualThreadRun#THREADS} virtual threads through one etcd client, on Java 21 or later. */
class EtcdVirtualThreadTest {

    @Test
    void tenThousandVirtualThreadsOnAHundredLocks() throws Exception {
        try (EtcdCluster etcd = EtcdCluster.start(1, null)) {
            VirtualThreadRun.check(etcd.uri());
        }
    }
}
