package io.dlock.internal;

import io.dlock.spi.BackendUri;
import io.dlock.spi.LockProvider;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.TreeSet;

/** Finds providers with {@link ServiceLoader} and picks one by URI scheme. */
public final class Providers {

    /** Which jar provides which scheme, for the message when a provider is missing. */
    private static final Map<String, String> KNOWN = Map.of(
            "redis", "io.dlock:dlock-redis",
            "rediss", "io.dlock:dlock-redis",
            "etcd", "io.dlock:dlock-etcd",
            "etcds", "io.dlock:dlock-etcd",
            "zookeeper", "io.dlock:dlock-zookeeper",
            "zk", "io.dlock:dlock-zookeeper",
            "dynamodb", "io.dlock:dlock-dynamodb",
            "mem", "io.dlock:dlock-tck");

    private Providers() { }

    /**
     * Returns every provider on the classpath (the context class loader's and dlock's own).
     *
     * @return the providers, without duplicates
     */
    public static List<LockProvider> all() {
        Map<Class<?>, LockProvider> found = new LinkedHashMap<>();
        List<ClassLoader> loaders = new ArrayList<>();
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        if (context != null) {
            loaders.add(context);
        }
        loaders.add(Providers.class.getClassLoader());
        for (ClassLoader loader : loaders) {
            try {
                for (LockProvider p : ServiceLoader.load(LockProvider.class, loader)) {
                    found.putIfAbsent(p.getClass(), p);
                }
            } catch (ServiceConfigurationError e) {
                throw new IllegalStateException("a dlock provider on the classpath failed to load: " + e.getMessage(), e);
            }
        }
        return new ArrayList<>(found.values());
    }

    /**
     * Picks the provider for a URI's scheme.
     *
     * @param uri the URI
     * @return the provider
     * @throws IllegalArgumentException if the URI is malformed or no provider handles its scheme;
     *     the message names the schemes that are available and the jar to add
     */
    public static LockProvider forUri(String uri) {
        String scheme = BackendUri.parse(uri).scheme();
        List<LockProvider> providers = all();
        TreeSet<String> schemes = new TreeSet<>();
        for (LockProvider p : providers) {
            if (p.schemes().contains(scheme)) {
                return p;
            }
            schemes.addAll(p.schemes());
        }
        String jar = KNOWN.get(scheme);
        throw new IllegalArgumentException("uri: no dlock provider on the classpath handles the scheme '"
                + scheme + "' (schemes found: " + (schemes.isEmpty() ? "none" : String.join(", ", schemes)) + "). "
                + (jar != null ? "Add the " + jar + " jar to the classpath."
                               : "Known schemes: " + String.join(", ", new TreeSet<>(KNOWN.keySet())) + "."));
    }
}
