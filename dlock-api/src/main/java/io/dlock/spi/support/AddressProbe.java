package io.dlock.spi.support;

import io.dlock.spi.BackendUri;
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
 * Says what is at a backend's addresses when its client library could not talk to them: one plain
 * TCP connect to each address, all at once on the caller's thread, bounded by a short budget (a
 * host name is resolved first, by the system's resolver and its own timeouts; the client library
 * resolved the same names a moment before, so the answers are usually cached). It tells apart
 * "nothing listens" (refused: known at once, so a backend can fail at once rather than retry until
 * its timeout), "something listens" (a server that did not answer the client: another service on
 * that port, or a paused or overloaded server), and "no answer at all" (a host down, or a firewall
 * that drops packets). Stateless.
 */
public final class AddressProbe {

    private AddressProbe() { }

    /** What one address turned out to be. */
    public enum Kind {
        /** Something accepted a TCP connection. */
        ACCEPTS,
        /** Nothing listens: the connection was refused. */
        REFUSED,
        /** The host name does not resolve. */
        UNRESOLVED,
        /** The connect failed otherwise (no route to the host, say); see {@link Finding#detail()}. */
        FAILED,
        /** No answer within the budget: the host is down, or a firewall drops the packets. */
        SILENT
    }

    /**
     * What the probe found at one address.
     *
     * @param address the address as configured
     * @param kind what it is
     * @param detail the failure for {@link Kind#FAILED} ({@code "NoRouteToHostException: ..."}), else empty
     * @param budget the probe's budget, which {@link Kind#SILENT} ran out of
     */
    public record Finding(BackendUri.HostPort address, Kind kind, String detail, Duration budget) {

        /**
         * @throws IllegalArgumentException if an argument is {@code null}
         */
        public Finding {
            Arguments.notNull("address", address);
            Arguments.notNull("kind", kind);
            Arguments.notNull("detail", detail);
            Arguments.notNull("budget", budget);
        }

        /**
         * Whether nothing can be listening there now: refused, or a name that does not resolve.
         *
         * @return true for {@link Kind#REFUSED} and {@link Kind#UNRESOLVED}
         */
        public boolean nothingListens() {
            return kind == Kind.REFUSED || kind == Kind.UNRESOLVED;
        }

        /**
         * Describes the finding in a sentence for a message, with what to check: for instance
         * "no etcd answered at 127.0.0.1:2379: nothing listens there (connection refused); check
         * the host, the port and that the server runs".
         *
         * @param service the server's kind as users name it, e.g. {@code ZooKeeper}
         * @return the sentence
         * @throws IllegalArgumentException if {@code service} is null or blank
         */
        public String describe(String service) {
            if (service == null || service.isBlank()) {
                throw new IllegalArgumentException("service must not be blank, was " + service);
            }
            String at = "no " + service + " answered at " + UriReader.authority(address);
            return switch (kind) {
                case ACCEPTS -> at + ": something there accepts TCP connections but did not complete a " + service
                        + " handshake (another service on that port, or a " + service + " server that is paused or "
                        + "overloaded); check the port";
                case REFUSED -> at + ": nothing listens there (connection refused); check the host, the port and "
                        + "that the server runs";
                case UNRESOLVED -> "the host name of " + UriReader.authority(address) + " does not resolve; check the "
                        + "host";
                case FAILED -> at + ": a TCP connection failed (" + detail + "); check the host and the port";
                case SILENT -> at + ", which did not even accept a TCP connection within " + budget.toMillis()
                        + " ms (host down, or packets dropped by a firewall); check the host and the network";
            };
        }
    }

    /**
     * Probes every address.
     *
     * @param addresses the addresses, each with its port
     * @param budget the longest the connects may take in all
     * @return one finding per address, in the order given
     * @throws IllegalArgumentException if {@code addresses} is null or has an address without a
     *     port, or {@code budget} is null or negative
     */
    public static List<Finding> probe(List<BackendUri.HostPort> addresses, Duration budget) {
        if (addresses == null) {
            throw new IllegalArgumentException("addresses must not be null");
        }
        if (budget == null || budget.isNegative()) {
            throw new IllegalArgumentException("budget must be zero or positive, was " + budget);
        }
        for (BackendUri.HostPort a : addresses) {
            if (a == null || a.port() < 0) {
                throw new IllegalArgumentException("addresses must each have a port, was " + a);
            }
        }
        int n = addresses.size();
        Kind[] kinds = new Kind[n];
        String[] details = new String[n];
        SocketChannel[] channels = new SocketChannel[n];
        long end = System.nanoTime() + budget.toNanos();
        try (Selector selector = Selector.open()) {
            int pending = 0;
            for (int i = 0; i < n; i++) {
                InetSocketAddress a = new InetSocketAddress(addresses.get(i).host(), addresses.get(i).port());
                if (a.isUnresolved()) {
                    kinds[i] = Kind.UNRESOLVED;
                    continue;
                }
                try {
                    SocketChannel c = SocketChannel.open();
                    channels[i] = c;
                    c.configureBlocking(false);
                    if (c.connect(a)) {
                        kinds[i] = Kind.ACCEPTS;
                    } else {
                        c.register(selector, SelectionKey.OP_CONNECT, i);
                        pending++;
                    }
                } catch (IOException e) {
                    failed(kinds, details, i, e);
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
                        kinds[i] = Kind.ACCEPTS;
                    } catch (IOException e) {
                        failed(kinds, details, i, e);
                    }
                    key.cancel();
                    pending--;
                }
                selector.selectedKeys().clear();
            }
        } catch (IOException e) {
            // no selector: what is still unknown is reported as silent
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
        List<Finding> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(new Finding(addresses.get(i), kinds[i] == null ? Kind.SILENT : kinds[i],
                    details[i] == null ? "" : details[i], budget));
        }
        return out;
    }

    /**
     * Whether nothing listens at any of the addresses: every finding is {@link Kind#REFUSED} or
     * {@link Kind#UNRESOLVED}. A client that has never reached its server can then fail at once.
     *
     * @param findings what {@link #probe} found
     * @return true if there is at least one finding and nothing listens at any
     * @throws IllegalArgumentException if {@code findings} is null
     */
    public static boolean nothingListens(List<Finding> findings) {
        if (findings == null) {
            throw new IllegalArgumentException("findings must not be null");
        }
        return !findings.isEmpty() && findings.stream().allMatch(Finding::nothingListens);
    }

    private static void failed(Kind[] kinds, String[] details, int i, IOException e) {
        if (e instanceof ConnectException) {
            kinds[i] = Kind.REFUSED;
        } else {
            kinds[i] = Kind.FAILED;
            details[i] = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
        }
    }
}
