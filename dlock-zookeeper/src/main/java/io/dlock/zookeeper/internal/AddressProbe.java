package io.dlock.zookeeper.internal;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Says why no ZooKeeper session came: after a connection attempt failed, one plain TCP connect to
 * each configured address, on the caller's thread, the connects bounded by a short budget (a host
 * name is resolved first, by the system's resolver and its own timeouts; the client resolved the
 * same names a moment before, so the answers are usually cached). It tells
 * apart "nothing listens" (refused), "something listens but never spoke ZooKeeper" (accepted: a
 * wrong port, another service, or a paused or overloaded server) and "no answer at all" (a host down
 * or a firewall that drops packets). Stateless.
 */
final class AddressProbe {

    private AddressProbe() { }

    /**
     * Probes every address and describes what each one is.
     *
     * @param addresses the configured addresses, possibly unresolved
     * @param budget the longest the probe may take in all
     * @return one finding per address, in order, each naming the address
     */
    static List<String> findings(List<InetSocketAddress> addresses, Duration budget) {
        int n = addresses.size();
        String[] found = new String[n];
        SocketChannel[] channels = new SocketChannel[n];
        long end = System.nanoTime() + budget.toNanos();
        try (Selector selector = Selector.open()) {
            int pending = 0;
            for (int i = 0; i < n; i++) {
                InetSocketAddress configured = addresses.get(i);
                InetSocketAddress a = new InetSocketAddress(configured.getHostString(), configured.getPort());
                if (a.isUnresolved()) {
                    found[i] = "the host name of " + shown(configured) + " does not resolve; check the host";
                    continue;
                }
                try {
                    SocketChannel c = SocketChannel.open();
                    channels[i] = c;
                    c.configureBlocking(false);
                    if (c.connect(a)) {
                        found[i] = accepts(configured);
                    } else {
                        c.register(selector, SelectionKey.OP_CONNECT, i);
                        pending++;
                    }
                } catch (IOException e) {
                    found[i] = failed(configured, e);
                }
            }
            while (pending > 0) {
                long left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
                if (left <= 0) {
                    break;
                }
                selector.select(left);
                for (SelectionKey key : selector.selectedKeys()) {
                    int i = (Integer) key.attachment();
                    try {
                        ((SocketChannel) key.channel()).finishConnect();
                        found[i] = accepts(addresses.get(i));
                    } catch (IOException e) {
                        found[i] = failed(addresses.get(i), e);
                    }
                    key.cancel();
                    pending--;
                }
                selector.selectedKeys().clear();
            }
        } catch (IOException e) {
            // no selector: say what the probe could not find out
        } finally {
            for (SocketChannel c : channels) {
                if (c != null) {
                    try {
                        c.close();
                    } catch (IOException ignored) {
                        // the probe's own socket; nothing to do
                    }
                }
            }
        }
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(found[i] != null ? found[i] : "no ZooKeeper answered at " + shown(addresses.get(i))
                    + ", which did not even accept a TCP connection within " + budget.toMillis()
                    + " ms (host down, or packets dropped by a firewall); check the host and the network");
        }
        return out;
    }

    private static String accepts(InetSocketAddress a) {
        return "no ZooKeeper answered at " + shown(a) + ": something there accepts TCP connections but did not "
                + "complete a ZooKeeper handshake (another service on that port, or a ZooKeeper server that is "
                + "paused or overloaded); check the port";
    }

    private static String failed(InetSocketAddress a, IOException e) {
        if (e instanceof ConnectException) {
            return "no ZooKeeper answered at " + shown(a) + ": nothing listens there (connection refused); check "
                    + "the host, the port and that the server runs";
        }
        return "no ZooKeeper answered at " + shown(a) + ": a TCP connection failed (" + e.getClass().getSimpleName()
                + (e.getMessage() == null ? "" : ": " + e.getMessage()) + "); check the host and the port";
    }

    private static String shown(InetSocketAddress a) {
        String host = a.getHostString();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
    }
}
