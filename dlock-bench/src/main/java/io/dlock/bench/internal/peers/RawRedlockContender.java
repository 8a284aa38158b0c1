package io.dlock.bench.internal.peers;

import io.dlock.bench.internal.Deployment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedDeque;
import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Protocol;

/**
 * The floor on Redlock's independent primaries: the least a correct majority lock can send with
 * jedis. Acquire sends {@code SET key token NX PX lease} to every node at once (one round trip,
 * not one per node) and holds when a majority answered OK; otherwise it deletes its key where it
 * was set (the compare-and-delete of {@link RawRedisContender}, again to those nodes at once)
 * and tries again after 1 ms. Release is that compare-and-delete on the nodes that granted. No
 * validity-time check, no renewal, no waiting, no token.
 *
 * <p>The requests of one operation go out on one connection per node from the calling thread,
 * each flushed before any answer is read, so the nodes work in parallel without a thread
 * hand-off; each thread borrows one connection per node from a pool of such sets.
 */
public final class RawRedlockContender extends Floor {

    @Override
    public String name() {
        return "raw jedis on a majority (floor)";
    }

    @Override
    public Session connect(Deployment deployment, Duration lease) {
        List<InetSocketAddress> nodes = deployment.addresses();
        int quorum = nodes.size() / 2 + 1;
        String sha = RawRedisContender.sha1(RawRedisContender.RELEASE);
        String px = Long.toString(lease.toMillis());
        ConcurrentLinkedDeque<NodeConnection[]> idle = new ConcurrentLinkedDeque<>();
        return new Session() {
            @Override
            public Held acquire(String key) throws InterruptedException {
                String token = UUID.randomUUID().toString();
                NodeConnection[] c = borrow();
                boolean[] granted = new boolean[c.length];
                try {
                    while (true) {
                        for (NodeConnection n : c) {
                            n.send(Protocol.Command.SET, key, token, "NX", "PX", px);
                        }
                        int count = 0;
                        for (int i = 0; i < c.length; i++) {
                            granted[i] = c[i].getOne() != null; // +OK, or a null reply when the key exists
                            count += granted[i] ? 1 : 0;
                        }
                        if (count >= quorum) {
                            break;
                        }
                        if (count > 0) {
                            release(c, granted, key, token);
                        }
                        Thread.sleep(1);
                    }
                } catch (InterruptedException | RuntimeException e) {
                    discard(c);
                    throw e;
                }
                idle.push(c);
                return () -> {
                    NodeConnection[] r = borrow();
                    try {
                        release(r, granted, key, token);
                    } catch (RuntimeException e) {
                        discard(r);
                        throw e;
                    }
                    idle.push(r);
                };
            }

            private void release(NodeConnection[] c, boolean[] on, String key, String token) {
                for (int i = 0; i < c.length; i++) {
                    if (on[i]) {
                        c[i].send(Protocol.Command.EVALSHA, sha, "1", key, token);
                    }
                }
                for (int i = 0; i < c.length; i++) {
                    if (on[i]) {
                        c[i].getOne();
                    }
                }
            }

            private NodeConnection[] borrow() {
                NodeConnection[] c = idle.poll();
                if (c != null) {
                    return c;
                }
                c = new NodeConnection[nodes.size()];
                try {
                    for (int i = 0; i < c.length; i++) {
                        c[i] = new NodeConnection(new HostAndPort(nodes.get(i).getHostString(), nodes.get(i).getPort()));
                        c[i].send(Protocol.Command.SCRIPT, "LOAD", RawRedisContender.RELEASE);
                        c[i].getOne();
                    }
                } catch (RuntimeException e) {
                    discard(c);
                    throw e;
                }
                return c;
            }

            @Override
            public void close() {
                NodeConnection[] c;
                while ((c = idle.poll()) != null) {
                    discard(c);
                }
            }
        };
    }

    private static void discard(NodeConnection[] c) {
        for (NodeConnection n : c) {
            if (n != null) {
                n.close();
            }
        }
    }

    /** A jedis connection whose request goes out at once, before the answer is asked for. */
    private static final class NodeConnection extends Connection {

        NodeConnection(HostAndPort node) {
            super(node);
        }

        void send(Protocol.Command command, String... args) {
            sendCommand(command, args);
            flush();
        }
    }
}
