package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.Contender;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Curator's {@code InterProcessMutex} (the lock recipe most ZooKeeper users take), one mutex
 * object per name and client, with the session timeout at the benchmark's lease time.
 */
public final class CuratorContender implements Contender.OnOneServer {

    @Override
    public String name() {
        return "Curator InterProcessMutex";
    }

    @Override
    public Session connect(InetSocketAddress server, Duration lease) throws InterruptedException {
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString(server.getHostString() + ":" + server.getPort())
                .sessionTimeoutMs((int) lease.toMillis())
                .connectionTimeoutMs(5_000)
                .retryPolicy(new ExponentialBackoffRetry(100, 3))
                .build();
        curator.start();
        if (!curator.blockUntilConnected(30, TimeUnit.SECONDS)) {
            curator.close();
            throw new IllegalStateException("Curator did not connect to " + server + " in 30 s");
        }
        Map<String, InterProcessMutex> mutexes = new ConcurrentHashMap<>();
        return new Session() {
            @Override
            public Held acquire(String key) throws Exception {
                InterProcessMutex m = mutexes.computeIfAbsent(key, k -> new InterProcessMutex(curator, "/bench-curator/" + k));
                m.acquire();
                return m::release;
            }

            @Override
            public void close() {
                curator.close();
            }
        };
    }
}
