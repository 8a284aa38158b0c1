package io.dlock.tck;

import io.dlock.spi.support.Arguments;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * A fixture for a networked backend that freezes clients by routing them through {@link TcpProxy}
 * instances, one per server endpoint. A subclass says where its servers listen and how to write a
 * URI for a list of endpoints. Its clients inject every {@link NetworkFault} kind, on all of their
 * proxies at once. {@link NetworkFault#LATENCY}'s delays are drawn, per proxy, from seeds that
 * {@link #useSeed(long)} (by default {@link NetworkFault#defaultSeed()}) starts.
 */
public abstract class ProxiedFixture implements TckFixture {

    private SplittableRandom seeds = new SplittableRandom(NetworkFault.defaultSeed()); // guarded by this

    /** Creates the fixture. */
    protected ProxiedFixture() { }

    /**
     * Sets the seed that the delays of {@link NetworkFault#LATENCY} are drawn from, for the
     * clients opened from now on (each proxy gets its own seed, drawn from this one in the order
     * the proxies start).
     *
     * @param seed the seed, usually the TCK's
     */
    @Override
    public synchronized void useSeed(long seed) {
        seeds = new SplittableRandom(seed);
    }

    private synchronized long nextSeed() {
        return seeds.nextLong();
    }

    /** @return the addresses of the backend's servers */
    protected abstract List<InetSocketAddress> endpoints();

    /**
     * Writes this backend's URI for the given endpoints, with whatever credentials and options
     * the fixture's clients need.
     *
     * @param endpoints where the client should connect
     * @return the URI
     */
    protected abstract String uri(List<InetSocketAddress> endpoints);

    @Override
    public LockClientConfig.Builder clientConfig() {
        return LockClientConfig.builder(uri(endpoints()));
    }

    @Override
    public Optional<FreezableClient> openFreezable(LockClientConfig.Builder config) {
        Arguments.notNull("config", config);
        List<TcpProxy> proxies = new ArrayList<>();
        List<InetSocketAddress> through = new ArrayList<>();
        Map<InetSocketAddress, InetSocketAddress> proxied = new LinkedHashMap<>();
        try {
            for (InetSocketAddress target : endpoints()) {
                TcpProxy proxy = TcpProxy.start(target, nextSeed());
                proxies.add(proxy);
                through.add(proxy.address());
                proxied.put(target, proxy.address());
            }
            LockClient client = openProxied(config.uri(uri(through)).build(), Collections.unmodifiableMap(proxied));
            return Optional.of(new ProxiedClient(client, proxies));
        } catch (RuntimeException e) {
            proxies.forEach(TcpProxy::close);
            throw e;
        }
    }

    /**
     * Opens the client of {@link #openFreezable}: by default {@link LockClient#open(LockClientConfig)}.
     * A fixture whose clients learn more server addresses from the servers (the nodes of a
     * cluster) overrides it, so that those connections go through the proxies too.
     *
     * @param config the configuration, its URI naming the proxies
     * @param proxied each endpoint's proxy, by the endpoint's address
     * @return the client
     */
    protected LockClient openProxied(LockClientConfig config, Map<InetSocketAddress, InetSocketAddress> proxied) {
        return LockClient.open(config);
    }

    private static final class ProxiedClient implements FreezableClient {
        private final LockClient client;
        private final List<TcpProxy> proxies;

        ProxiedClient(LockClient client, List<TcpProxy> proxies) {
            this.client = client;
            this.proxies = proxies;
        }

        @Override
        public LockClient client() {
            return client;
        }

        @Override
        public void freeze() {
            proxies.forEach(TcpProxy::freeze);
        }

        @Override
        public void crash() {
            proxies.forEach(TcpProxy::freeze);
            proxies.forEach(TcpProxy::cutConnections);
        }

        @Override
        public void unfreeze() {
            proxies.forEach(TcpProxy::unfreeze);
        }

        @Override
        public Set<NetworkFault> faults() {
            return EnumSet.allOf(NetworkFault.class);
        }

        @Override
        public void inject(NetworkFault fault) {
            if (fault == null) {
                throw new IllegalArgumentException("fault must not be null");
            }
            proxies.forEach(p -> p.inject(fault));
        }

        @Override
        public void heal() {
            proxies.forEach(TcpProxy::heal);
        }

        @Override
        public void close() {
            heal();
            try {
                client.close();
            } finally {
                proxies.forEach(TcpProxy::close);
            }
        }
    }
}
