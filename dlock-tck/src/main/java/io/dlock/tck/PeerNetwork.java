package io.dlock.tck;

import io.dlock.spi.support.Arguments;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The network between the members of a test cluster, where one member can really be cut off from
 * its peers while its clients still reach it (through a {@link SocketForwarder}). Each member runs
 * in a network namespace of its own ({@link #launch}), with an interface {@code peers} that has
 * the address {@code <subnet>.<i+1>/24}; its other end, {@code m<i>}, is a port of a bridge in one
 * more namespace, held by a shell of this network. {@link #isolate(int)} sets the member's bridge
 * port down: the member's interface loses its carrier and keeps its routes, and every packet
 * between it and its peers is dropped, both ways, on every connection, whoever dialed it, which
 * TCP proxies on the peer addresses could not do (a member's own outgoing connections go to the
 * others' addresses, not through anything in front of it). The subnet exists only inside these
 * namespaces, so it cannot clash with the host's networks, and nothing is added to the host's
 * namespace: the veth pairs are made directly in the member's and the bridge's namespaces.
 *
 * <p>Every namespace belongs to a process and vanishes with it, with its interfaces: a member's
 * with the member, the bridge's with this network's shell, which also exits when the test JVM
 * dies (it waits on a pipe from it). Needs {@link NetworkNamespaces#available()}. Thread-safe.
 */
public final class PeerNetwork implements AutoCloseable {

    private static final Pattern SUBNET = Pattern.compile("(25[0-5]|2[0-4]\\d|1?\\d?\\d)(\\.(25[0-5]|2[0-4]\\d|1?\\d?\\d)){2}");

    private final String subnet;
    private final Process bridge;
    /** The members cut off from their peers. Guarded by {@code this}. */
    private final Set<Integer> isolated = new HashSet<>();
    /** The members plugged in at least once (a re-plug removes a port the old namespace may have left). */
    private final Set<Integer> plugged = new HashSet<>();

    private PeerNetwork(String subnet, Process bridge) {
        this.subnet = subnet;
        this.bridge = bridge;
    }

    /**
     * Starts the bridge's namespace, with the bridge up and no member yet.
     *
     * @param subnet the first three octets of the members' /24, e.g. {@code 10.77.0}: a private
     *     block, used only inside the namespaces
     * @return the network
     * @throws IllegalArgumentException if {@code subnet} is not three octets
     * @throws IllegalStateException if namespaces cannot be made here, or the bridge fails
     */
    public static PeerNetwork start(String subnet) {
        if (subnet == null || !SUBNET.matcher(subnet).matches()) {
            throw new IllegalArgumentException("subnet must be three octets such as 10.77.0, not " + subnet);
        }
        if (!NetworkNamespaces.available()) {
            throw new IllegalStateException("network namespaces cannot be made here (root, unshare, nsenter and ip "
                    + "are needed)");
        }
        Process bridge;
        try {
            bridge = new ProcessBuilder(NetworkNamespaces.tool("unshare"), "--net", "--", "/bin/sh", "-c", "read x")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the bridge namespace", e);
        }
        PeerNetwork network = new PeerNetwork(subnet, bridge);
        try {
            NetworkNamespaces.awaitOwnNamespace(bridge);
            NetworkNamespaces.ip(bridge.pid(), "link add name br0 type bridge", "link set dev br0 up");
            return network;
        } catch (RuntimeException | Error e) {
            network.close();
            throw e;
        }
    }

    /**
     * Returns a member's address on this network, where its peers reach it (it exists only in the
     * member's namespace, once the member is launched).
     *
     * @param member the member's index, 0 to 253
     * @return {@code <subnet>.<member+1>}
     * @throws IllegalArgumentException if the index is out of range
     */
    public String address(int member) {
        checkIndex(member);
        return subnet + "." + (member + 1);
    }

    private static void checkIndex(int member) {
        if (member < 0 || member > 253) {
            throw new IllegalArgumentException("member must be 0 to 253, not " + member);
        }
    }

    /**
     * Starts a member's process in a namespace of its own and plugs it into the bridge before the
     * command runs (so it can bind {@link #address(int)} at once): the command is wrapped by
     * {@link NetworkNamespaces#inNewNamespace}, and the process is released once its interfaces
     * are up. A member that is isolated stays isolated across such restarts. The caller owns the
     * process (and kills it at the end; its namespace goes with it).
     *
     * @param member the member's index
     * @param builder the member's command, directory and redirections; its command is replaced by
     *     the wrapped one
     * @return the started process, with the pid of the member's command
     * @throws UncheckedIOException if the process cannot be started
     * @throws IllegalStateException if its namespace cannot be set up (the process is killed)
     */
    public Process launch(int member, ProcessBuilder builder) {
        Arguments.notNull("builder", builder);
        checkIndex(member);
        builder.command(NetworkNamespaces.inNewNamespace(builder.command()));
        Process p;
        try {
            p = builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start " + builder.command(), e);
        }
        try {
            NetworkNamespaces.awaitOwnNamespace(p);
            plugIn(member, p.pid());
            NetworkNamespaces.release(p);
            return p;
        } catch (RuntimeException | Error e) {
            p.destroyForcibly();
            throw e;
        }
    }

    /**
     * Connects a member's fresh namespace to the bridge: a veth pair, {@code peers} in the member's
     * namespace with its address, {@code m<i>} on the bridge, up unless the member is isolated.
     */
    private synchronized void plugIn(int member, long pid) {
        String port = "m" + member;
        if (!plugged.add(member)) {
            // the namespace of the member's last process may not be gone yet, nor with it the old pair
            try {
                NetworkNamespaces.ip(bridge.pid(), "link del dev " + port);
            } catch (IllegalStateException gone) {
                // it was gone already
            }
        }
        NetworkNamespaces.ip(0, "link add name peers netns " + pid + " type veth peer name " + port + " netns "
                + bridge.pid());
        NetworkNamespaces.ip(bridge.pid(), "link set dev " + port + " master br0",
                "link set dev " + port + (isolated.contains(member) ? " down" : " up"));
        NetworkNamespaces.ip(pid, "link set dev lo up", "link set dev peers up",
                "addr add " + address(member) + "/24 dev peers");
    }

    /**
     * Cuts a member off from its peers, both ways, from now until {@link #heal()}; its clients,
     * which do not come through this network, still reach it. Returns at once: callers wait for
     * the cluster to show the cut in their own terms.
     *
     * @param member the member's index
     * @throws IllegalArgumentException if the index is out of range
     */
    public synchronized void isolate(int member) {
        checkIndex(member);
        isolated.add(member);
        NetworkNamespaces.ip(bridge.pid(), "link set dev m" + member + " down");
    }

    /**
     * Reconnects every isolated member to its peers; returns at once.
     *
     * @return the members reconnected (empty if none was cut off)
     */
    public synchronized Set<Integer> heal() {
        if (isolated.isEmpty()) {
            return Set.of();
        }
        List<String> up = new ArrayList<>();
        for (int i : isolated) {
            up.add("link set dev m" + i + " up");
        }
        Set<Integer> healed = Set.copyOf(isolated);
        isolated.clear();
        NetworkNamespaces.ip(bridge.pid(), up.toArray(String[]::new));
        return healed;
    }

    /** @return the members cut off from their peers now */
    public synchronized Set<Integer> isolated() {
        return Set.copyOf(isolated);
    }

    /**
     * Ends the bridge's namespace (its shell exits; the ports on the bridge go with it). The
     * members' namespaces end with the members' processes, which the caller stops.
     */
    @Override
    public void close() {
        try {
            bridge.getOutputStream().close(); // the shell reads this pipe: at its end, it exits
        } catch (IOException ignored) {
            // it is killed below anyway
        }
        ServerProcesses.killAndWait(bridge, "bridge namespace");
    }

    @Override
    public String toString() {
        return "PeerNetwork{" + subnet + ".0/24, bridge pid " + bridge.pid() + "}";
    }
}
