package io.dlock.cli;

import io.dlock.LockClientConfig;
import io.dlock.spi.BackendUri;
import io.dlock.tck.LockProviderTck;
import io.dlock.tck.TckFixture;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Locale;

/**
 * The TCK against a live deployment, for {@code dlock tck}: a fixture that only opens clients on the
 * given URI. It offers no fault hooks (no freezing, no server control), so the rules that need
 * them are skipped and nothing is done to the deployment beyond taking and releasing locks whose
 * names start with {@code tck-}.
 */
class LiveTck extends LockProviderTck {

    /** What the next run uses; set by {@link TckCommand} before it launches the suite. */
    record Settings(String uri, Duration leaseTime, Duration operationTimeout) { }

    static volatile Settings settings;

    @Override
    protected TckFixture createFixture() {
        Settings s = settings;
        if (s == null) {
            throw new IllegalStateException("LiveTck runs from `dlock tck`, which sets its URI");
        }
        return new LiveFixture(s);
    }

    /** A fixture over a deployment someone else runs. */
    static final class LiveFixture implements TckFixture {
        private final Settings settings;

        LiveFixture(Settings settings) {
            this.settings = settings;
        }

        @Override
        public String name() {
            String uri = settings.uri();
            int sep = uri.indexOf("://");
            return sep > 0 ? uri.substring(0, sep).toLowerCase(Locale.ROOT) : "live";
        }

        @Override
        public LockClientConfig.Builder clientConfig() {
            return LockClientConfig.builder(settings.uri());
        }

        @Override
        public Duration leaseTime() {
            return settings.leaseTime();
        }

        @Override
        public Duration operationTimeout() {
            return settings.operationTimeout();
        }

        /**
         * For the URI schemes whose address is {@code host:port}, a loopback port where nothing
         * listens, so that V3 can check that an unreachable backend fails in time.
         */
        @Override
        public Optional<String> unreachableUri() {
            String scheme = name();
            if (!List.of("redis", "rediss", "zookeeper", "zk", "etcd", "etcds").contains(scheme)) {
                return Optional.empty();
            }
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                return Optional.of(scheme + "://127.0.0.1:" + s.getLocalPort());
            } catch (IOException e) {
                return Optional.empty();
            }
        }

        /** A live run never writes the project's compatibility report. */
        @Override
        public boolean reportable() {
            return false;
        }

        @Override
        public void close() {
            // nothing was started
        }

        @Override
        public String toString() {
            return "LiveFixture{" + BackendUri.redact(settings.uri()) + "}";
        }
    }
}
