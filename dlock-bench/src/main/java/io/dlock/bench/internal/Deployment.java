package io.dlock.bench.internal;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * What the contenders of one backend are given to connect to: one server's address, or the
 * addresses of a deployment of several nodes (the sentinels of a Sentinel group with its master
 * name, the seed nodes of a Cluster, the independent primaries of Redlock). Immutable.
 *
 * @param addresses the addresses clients are given, at least one, in order
 * @param masterName the name the sentinels know the primary by, or null when there are no sentinels
 */
public record Deployment(List<InetSocketAddress> addresses, String masterName) {

    /**
     * @param addresses the addresses clients are given, at least one
     * @param masterName the Sentinel master name, or null
     * @throws IllegalArgumentException if {@code addresses} is null, empty or holds null, or
     *     {@code masterName} is blank or holds a {@code /}
     */
    public Deployment {
        if (addresses == null || addresses.isEmpty() || addresses.stream().anyMatch(java.util.Objects::isNull)) {
            throw new IllegalArgumentException("addresses must name at least one address and no null, was " + addresses);
        }
        if (masterName != null && (masterName.isBlank() || masterName.contains("/"))) {
            throw new IllegalArgumentException("masterName must be null or a name without '/', was '" + masterName + "'");
        }
        addresses = List.copyOf(addresses);
    }

    /**
     * @param server the one server
     * @return a deployment of that server alone
     * @throws IllegalArgumentException if {@code server} is null
     */
    public static Deployment single(InetSocketAddress server) {
        if (server == null) {
            throw new IllegalArgumentException("server must not be null");
        }
        return new Deployment(List.of(server), null);
    }

    /**
     * @param nodes the nodes, at least one
     * @return a deployment of those nodes without a master name
     * @throws IllegalArgumentException as the constructor
     */
    public static Deployment of(List<InetSocketAddress> nodes) {
        return new Deployment(nodes, null);
    }

    /** @return whether clients are given several addresses (no counting proxy is put in front then) */
    public boolean multiNode() {
        return addresses.size() > 1 || masterName != null;
    }

    /**
     * @return the one server of a single-server deployment
     * @throws IllegalStateException if the deployment has several nodes or sentinels
     */
    public InetSocketAddress server() {
        if (multiNode()) {
            throw new IllegalStateException("a contender for one server was given a deployment of several nodes: " + this);
        }
        return addresses.get(0);
    }

    /** @return {@code host:port,host:port,...}, the form the dlock mode URIs take */
    public String hostPorts() {
        return addresses.stream().map(Deployment::hostPort).collect(Collectors.joining(","));
    }

    /** @return {@code redis://host:port} for each address, as Redisson takes them */
    public List<String> redisUris() {
        return addresses.stream().map(a -> "redis://" + hostPort(a)).collect(Collectors.toList());
    }

    /**
     * @return one command-line argument that {@link #parse} reads back: {@link #hostPorts()},
     *     then {@code /MASTER} when there is a master name
     */
    public String toArgument() {
        return masterName == null ? hostPorts() : hostPorts() + "/" + masterName;
    }

    /**
     * @param argument what {@link #toArgument()} wrote
     * @return the deployment
     * @throws IllegalArgumentException if {@code argument} is null or not of that form
     */
    public static Deployment parse(String argument) {
        if (argument == null || argument.isBlank()) {
            throw new IllegalArgumentException("deployment must be host:port[,host:port...][/MASTER], was " + argument);
        }
        int slash = argument.indexOf('/');
        String hosts = slash < 0 ? argument : argument.substring(0, slash);
        String master = slash < 0 ? null : argument.substring(slash + 1);
        List<InetSocketAddress> out = new ArrayList<>();
        for (String hp : hosts.split(",", -1)) {
            int colon = hp.lastIndexOf(':');
            String host = colon < 0 ? "" : hp.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            int port;
            try {
                port = colon < 0 ? -1 : Integer.parseInt(hp.substring(colon + 1));
            } catch (NumberFormatException e) {
                port = -1;
            }
            if (host.isEmpty() || port < 1 || port > 65_535) {
                throw new IllegalArgumentException("deployment must be host:port[,host:port...][/MASTER]; '" + hp
                        + "' in '" + argument + "' is not host:port");
            }
            out.add(new InetSocketAddress(host, port));
        }
        return new Deployment(out, master);
    }

    /**
     * @param a an address
     * @return {@code host:port}, the host in brackets when it is an IPv6 literal
     */
    public static String hostPort(InetSocketAddress a) {
        String host = a.getHostString();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
    }

    @Override
    public String toString() {
        return toArgument();
    }
}
