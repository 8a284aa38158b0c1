package io.dlock.zookeeper;

import io.dlock.tck.SocketForwarder;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import org.apache.zookeeper.server.quorum.QuorumPeerMain;

/**
 * The main class of a {@link ZkEnsemble} member's JVM: ZooKeeper's own {@link QuorumPeerMain},
 * preceded, when the member runs in a network namespace of its own, by a
 * {@link SocketForwarder} from a Unix socket (a file, reachable from the test JVM's namespace) to
 * the member's client port on {@code 127.0.0.1} in its namespace. ZooKeeper cannot serve clients
 * on a Unix socket itself, and this keeps the client path out of the peer network, so cutting a
 * member off from its peers leaves its clients connected.
 */
public final class ZkMemberMain {

    private ZkMemberMain() { }

    /**
     * Starts the forwarder, if asked, then the quorum peer; returns when the peer stops.
     *
     * @param args the Unix socket to serve clients on ({@code -} for none), the client port, and
     *     the path of the member's {@code zoo.cfg}
     */
    public static void main(String[] args) {
        if (args.length != 3) {
            throw new IllegalArgumentException("usage: ZkMemberMain <unix socket or -> <client port> <zoo.cfg>");
        }
        if (!args[0].equals("-")) {
            // lives as long as this JVM: its threads are daemons, the socket file is replaced on restart
            SocketForwarder.fromUnixSocket(Path.of(args[0]),
                    new InetSocketAddress("127.0.0.1", Integer.parseInt(args[1])));
        }
        QuorumPeerMain.main(new String[] {args[2]});
    }
}
