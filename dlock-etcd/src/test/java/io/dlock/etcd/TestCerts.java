package io.dlock.etcd;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A throw-away certificate authority and a server certificate for {@code 127.0.0.1} and
 * {@code localhost}, made with the {@code openssl} command in a temporary directory.
 */
final class TestCerts implements AutoCloseable {

    final Path dir;
    final Path caCert;
    final Path serverCert;
    final Path serverKey;

    private TestCerts(Path dir) {
        this.dir = dir;
        this.caCert = dir.resolve("ca.pem");
        this.serverCert = dir.resolve("server.pem");
        this.serverKey = dir.resolve("server.key");
    }

    /** @return fresh certificates; fails with what to install if openssl is missing */
    static TestCerts generate() {
        Path dir;
        try {
            dir = Files.createTempDirectory("dlock-etcd-certs-");
            Files.writeString(dir.resolve("san.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n", StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        TestCerts c = new TestCerts(dir);
        c.openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
                "-subj", "/CN=dlock test CA");
        c.openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
                "-subj", "/CN=localhost");
        c.openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", "server.pem", "-days", "2", "-extfile", "san.cnf");
        return c;
    }

    private void openssl(String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(binary());
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("openssl " + String.join(" ", args) + " failed:\n" + out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static String binary() {
        for (String p : List.of("/usr/bin/openssl", "/usr/local/bin/openssl")) {
            if (Files.isExecutable(Path.of(p))) {
                return p;
            }
        }
        throw new IllegalStateException("openssl is not installed: the TLS tests make their certificates with it; "
                + "install it, e.g. apt-get install openssl");
    }

    /** @return a trust manager factory that trusts the test CA */
    TrustManagerFactory trust() {
        try (InputStream in = Files.newInputStream(caCert)) {
            X509Certificate ca = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            ks.setCertificateEntry("dlock-test-ca", ca);
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            return tmf;
        } catch (Exception e) {
            throw new IllegalStateException("cannot load " + caCert, e);
        }
    }

    /** @return an SSL context that trusts the test CA */
    SSLContext sslContext() {
        try {
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, trust().getTrustManagers(), null);
            return ctx;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return what {@link EtcdCluster} needs to serve TLS */
    EtcdCluster.Tls serverTls() {
        return new EtcdCluster.Tls(serverCert, serverKey, sslContext());
    }

    @Override
    public void close() {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temp dir left behind is harmless
        }
    }
}
