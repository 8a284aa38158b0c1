package io.dlock.redis;

import static io.dlock.tck.SpiAnswers.*;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.dlock.LockClientConfig;
import io.dlock.LostReason;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.BackendUri;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.function.Executable;
import redis.clients.jedis.Jedis;

/** Helpers shared by the Redis tests. */
final class TestSupport {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final AtomicInteger THREADS = new AtomicInteger();

    private TestSupport() { }

    static final BackendEvents NO_EVENTS = new BackendEvents() {
        @Override
        public void allLeasesLost(LostReason reason) {
        }

        @Override
        public void leaseLost(String ownerId, LostReason reason) {
        }
    };

    static String ownerId() {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    static AcquireRequest request(String name, Duration lease) {
        return new AcquireRequest(name, ownerId(), lease);
    }

    /** Opens the backend through the SPI, as the core does, with daemon threads named test-redis-N. */
    static LockBackend<Void> openBackend(String uri, Duration operationTimeout) {
        LockClientConfig config = LockClientConfig.builder(uri).operationTimeout(operationTimeout).build();
        ThreadFactory threads = r -> {
            Thread t = new Thread(r, "test-redis-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        // the backend class itself, not the provider's LockBackend<?>: a test knows its state type
        @SuppressWarnings("unchecked")
        LockBackend<Void> backend = (LockBackend<Void>) io.dlock.redis.internal.RedisBackends.open(
                new BackendContext(config, BackendUri.parse(uri), threads, NO_EVENTS), null);
        return backend;
    }

    static Jedis jedis(RedisServer server) {
        return new Jedis(RedisServer.HOST, server.port());
    }

    /** Total EVAL and EVALSHA calls the server has run. */
    static long scriptCalls(Jedis jedis) {
        long calls = 0;
        for (String line : jedis.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                String stats = line.substring(line.indexOf(':') + 1);
                for (String kv : stats.split(",")) {
                    if (kv.startsWith("calls=")) {
                        calls += Long.parseLong(kv.substring("calls=".length()));
                    }
                }
            }
        }
        return calls;
    }

    /**
     * Makes a self-signed certificate for the address 127.0.0.1 only, with {@code openssl}, in a
     * directory: {@code cert.pem} and {@code key.pem}.
     *
     * @return the certificate's path (the key is next to it), or null if openssl is missing or failed
     */
    static java.nio.file.Path selfSignedCertificate(java.nio.file.Path dir) throws InterruptedException {
        java.nio.file.Path cert = dir.resolve("cert.pem");
        java.nio.file.Path key = dir.resolve("key.pem");
        try {
            Process openssl = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                    "-keyout", key.toString(), "-out", cert.toString(), "-days", "2", "-subj", "/CN=dlock-test",
                    "-addext", "subjectAltName=IP:127.0.0.1").redirectErrorStream(true)
                    .redirectOutput(dir.resolve("openssl.log").toFile()).start();
            return openssl.waitFor(60, TimeUnit.SECONDS) && openssl.exitValue() == 0 ? cert : null;
        } catch (java.io.IOException e) {
            return null;
        }
    }

    /** @return a socket factory that trusts exactly the given PEM certificate */
    static javax.net.ssl.SSLSocketFactory trusting(java.nio.file.Path cert) throws Exception {
        java.security.KeyStore trust = java.security.KeyStore.getInstance(java.security.KeyStore.getDefaultType());
        trust.load(null, null);
        try (java.io.InputStream in = java.nio.file.Files.newInputStream(cert)) {
            trust.setCertificateEntry("dlock-test", java.security.cert.CertificateFactory.getInstance("X.509")
                    .generateCertificate(in));
        }
        javax.net.ssl.TrustManagerFactory tmf = javax.net.ssl.TrustManagerFactory.getInstance(
                javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        javax.net.ssl.SSLContext ssl = javax.net.ssl.SSLContext.getInstance("TLS");
        ssl.init(null, tmf.getTrustManagers(), null);
        return ssl.getSocketFactory();
    }

    /**
     * Waits out a fresh deployment's first lock-delay through the API, as a fixture must before its
     * rules run: nothing tells a first start from a restart that lost the data, so the first
     * acquire waits one lock-delay.
     *
     * @param config the fixture's client configuration
     * @param lockDelay the clients' lock-delay
     * @param what the deployment, for the failure's message
     */
    static void waitOutTheFirstLockDelay(io.dlock.LockClientConfig.Builder config, Duration lockDelay, String what) {
        io.dlock.LockOptions shortLease = io.dlock.LockOptions.builder()
                .leaseTime(Duration.ofMillis(Math.min(1000, lockDelay.toMillis()))).build();
        Duration patience = lockDelay.plusSeconds(20); // generous: one lock-delay, plus slack for a loaded machine
        try (io.dlock.LockClient c = io.dlock.LockClient.open(config.build())) {
            io.dlock.Lease lease = c.lock("tck-fixture-lock-delay", shortLease).tryAcquire(patience)
                    .orElseThrow(() -> new IllegalStateException(what + " granted no lock within " + patience
                            + " with a lock-delay of " + lockDelay));
            lease.release();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting out the first lock-delay", e);
        }
    }
}
