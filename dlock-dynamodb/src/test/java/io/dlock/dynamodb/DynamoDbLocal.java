package io.dlock.dynamodb;

import io.dlock.tck.ServerProcesses;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * DynamoDB Local in its own JVM on a free loopback port, for tests. It is not on the test
 * classpath (it carries an old AWS SDK): the build copies its jars to
 * {@code target/dynamodb-local/lib} and the sqlite4java natives to {@code .../native}, and this
 * class starts {@code java -cp lib/* ...ServerRunner} with the JDK that runs the tests.
 *
 * <p>The database lives in a file ({@code -dbPath}, in {@code /dev/shm} where there is one, so
 * it is quick), not in memory: a kill and restart keeps every item, as DynamoDB itself never loses
 * a committed write, so token counters survive. {@code -sharedDb} makes every access key and
 * region see the same tables. Telemetry is off. Can pause (SIGSTOP), resume, kill (SIGKILL) and
 * restart on the same port.
 */
public final class DynamoDbLocal implements AutoCloseable {

    static final String HOST = "127.0.0.1";
    static final String REGION = "us-east-1";
    /** DynamoDB Local accepts any credentials; these are what the tests use. */
    static final String ACCESS_KEY = "dlocktest";
    static final String SECRET_KEY = "dlocktestsecret";

    private static final long START_TIMEOUT_MILLIS = 60_000;

    private final Path home;
    private final Path dbDir;
    private final Path log;
    private int port;
    private Process process;
    private boolean paused;

    private DynamoDbLocal() {
        this.home = home();
        try {
            Path shm = Path.of("/dev/shm");
            this.dbDir = Files.isDirectory(shm) && Files.isWritable(shm)
                    ? Files.createTempDirectory(shm, "dlock-dynamodb-test-")
                    : Files.createTempDirectory("dlock-dynamodb-test-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.log = dbDir.resolve("dynamodb-local.log");
    }

    /** @return a started server */
    public static DynamoDbLocal start() {
        DynamoDbLocal server = new DynamoDbLocal();
        try {
            server.startOnFreePort();
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    /** Where the build put DynamoDB Local: the system property set by the pom, or the default. */
    private static Path home() {
        Path dir = Path.of(System.getProperty("dlock.dynamodb-local.dir", "target/dynamodb-local"));
        if (!Files.isDirectory(dir.resolve("lib")) || !Files.isDirectory(dir.resolve("native"))) {
            throw new IllegalStateException("DynamoDB Local is not in " + dir.toAbsolutePath() + ": the build copies it "
                    + "there in the process-test-resources phase (maven-antrun-plugin in dlock-dynamodb/pom.xml); run the "
                    + "tests with mvn, e.g. mvn -pl dlock-dynamodb test");
        }
        return dir;
    }

    int port() {
        return port;
    }

    public InetSocketAddress address() {
        return new InetSocketAddress(HOST, port);
    }

    /** @return {@code http://127.0.0.1:PORT} */
    public String endpoint() {
        return "http://" + HOST + ":" + port;
    }

    long pid() {
        return process.pid();
    }

    private void startOnFreePort() {
        IllegalStateException last = null;
        for (int i = 0; i < 5; i++) {
            port = freePort();
            try {
                launch();
                return;
            } catch (IllegalStateException e) {
                last = e; // most likely another process took the port meanwhile: try another
            }
        }
        throw last;
    }

    private void launch() {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // C1 only: with C2 compiling on a 2-core machine it answered two to three times slower in short runs
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Djava.library.path=" + home.resolve("native").toAbsolutePath(),
                "-cp", home.resolve("lib").toAbsolutePath() + "/*",
                "com.amazonaws.services.dynamodbv2.local.main.ServerRunner",
                "-port", Integer.toString(port), "-sharedDb", "-dbPath", dbDir.toString(), "-disableTelemetry"));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        try {
            process = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start " + java, e);
        }
        paused = false;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MILLIS);
        while (System.nanoTime() - deadline < 0) {
            if (!process.isAlive()) {
                throw new IllegalStateException("DynamoDB Local exited with " + process.exitValue() + " on port " + port
                        + "; its log:\n" + readLog());
            }
            if (ready()) {
                return;
            }
            sleep(50);
        }
        process.destroyForcibly();
        throw new IllegalStateException("DynamoDB Local did not answer on port " + port + " within "
                + START_TIMEOUT_MILLIS + " ms; its log:\n" + readLog());
    }

    private boolean ready() {
        try (DynamoDbClient c = sdkClient(Duration.ofSeconds(2))) {
            c.listTables();
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * A plain SDK client for this server, for set-up and inspection in tests.
     *
     * @param timeout the API call timeout
     * @return the client; close it
     */
    DynamoDbClient sdkClient(Duration timeout) {
        return DynamoDbClient.builder()
                .httpClient(UrlConnectionHttpClient.builder().connectionTimeout(timeout).socketTimeout(timeout).build())
                .region(Region.of(REGION))
                .endpointOverride(URI.create(endpoint()))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS_KEY, SECRET_KEY)))
                .overrideConfiguration(o -> o.apiCallTimeout(timeout))
                .build();
    }

    String readLog() {
        try {
            return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "(no log)";
        } catch (IOException e) {
            return "(log unreadable: " + e + ")";
        }
    }

    /** Suspends the process with SIGSTOP: connections stay open and nothing is answered. */
    void pause() {
        ServerProcesses.signal(process, "STOP");
        paused = true;
    }

    /** Resumes a paused process with SIGCONT. */
    void resume() {
        ServerProcesses.signal(process, "CONT");
        paused = false;
    }

    /** Kills the process with SIGKILL and waits until it is gone. Committed items stay in the database file. */
    void kill() {
        ServerProcesses.killAndWait(process, "DynamoDB Local");
        paused = false;
    }

    /** Starts the server again on the same port and database, after {@link #kill()}; retries while the port is busy. */
    void restart() {
        if (process.isAlive()) {
            kill();
        }
        IllegalStateException last = null;
        for (int i = 0; i < 20; i++) {
            try {
                launch();
                return;
            } catch (IllegalStateException e) {
                last = e;
                sleep(250);
            }
        }
        throw last;
    }



    /** Stops the server and deletes its database. */
    @Override
    public void close() {
        if (process != null && process.isAlive()) {
            if (paused) {
                try {
                    resume();
                } catch (RuntimeException ignored) {
                    // it is killed below anyway
                }
            }
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        ServerProcesses.deleteTree(dbDir);
    }

    /** @return a loopback port that was free a moment ago */
    static int freePort() {
        return ServerProcesses.freeLoopbackPort();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for DynamoDB Local", e);
        }
    }

    @Override
    public String toString() {
        return "DynamoDbLocal{" + endpoint() + ", pid " + (process == null ? "-" : process.pid()) + "}";
    }
}
