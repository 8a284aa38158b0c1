package io.dlock.tck.mem;

import io.dlock.tck.VirtualThreadRun;
import org.junit.jupiter.api.Test;

/** {@value VirtualThreadRun#THREADS} virtual threads through one mem:// client, on Java 21 or later. */
class MemVirtualThreadTest {

    @Test
    void tenThousandVirtualThreadsOnAHundredLocks() {
        VirtualThreadRun.check("mem://vt-" + System.nanoTime());
    }
}
