package io.dlock.redis;

import io.dlock.tck.ServerProcesses;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.SSLSocketFactory;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/**
 * A real {@code redis-server} process on a free loopback port, for tests: no persistence
 * ({@code --save ''}, {@code --appendonly no}), so a kill and restart loses every key, as a
 * server without persistence would. Can pause (SIGSTOP), resume, kill (SIGKILL) and restart on the
 * same port.
 *
 * <p>dlock's lock-delay: a server without dlock's lock-delay marker refuses grants for one
 * lock-delay (30 s by default), since it cannot tell a first start from a restart that lost its
 * locks. A server this class has just started has granted nothing, so {@link #start()} marks it
 * as past its lock-delay for the default prefix in database 0 ({@link #markLockDelayPassed}),
 * as a deployment long in service would be; tests of other prefixes or databases mark those.
 * {@link #restart()} never does: a restarted server must show the lock-delay.
 * {@link #startUnmarked(List)} gives a server as just installed.
 */
public final class RedisServer implements AutoCloseable {

    static final String HOST = "127.0.0.1";

    /** dlock's default key prefix. */
    static final String DEFAULT_PREFIX = "dlock:";

    /**
     * Writes the lock-delay marker of a prefix (KEYS[1] = PREFIX epoch) as this server process
     * would have written it at the epoch with no lock-delay asked since: "RUNID 0 0", the format
     * {@code Script.ACQUIRE} documents. Every lock-delay has then passed.
     */
    private static final String MARK_LOCK_DELAY_PASSED =
            "local run = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')\n"
            + "redis.call('SET', KEYS[1], run .. ' 0 0')\n"
            + "return run";

    private static final long START_TIMEOUT_MILLIS = 15_000;

    private final List<String> extraArgs;
    private final boolean tls;
    private final Path dir;
    /** A configuration file given first on the command line (a sentinel's, which Sentinel rewrites), or null. */
    private Path conf;
    private int port;
    private Process process;
    private boolean paused;
    private int logMark;

    private RedisServer(List<String> extraArgs, boolean tls) {
        this.extraArgs = List.copyOf(extraArgs);
        this.tls = tls;
        try {
            this.dir = Files.createTempDirectory("dlock-redis-test-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return a started server without authentication, past dlock's lock-delay for the default prefix */
    public static RedisServer start() {
        return start(List.of());
    }

    /**
     * Starts a server with extra {@code redis-server} options, e.g. {@code --requirepass pw}, past
     * dlock's lock-delay for the default prefix in database 0 unless it is a replica
     * ({@code --replicaof}: it takes its primary's data).
     *
     * @param extraArgs options appended to the command line
     * @return the started server
     */
    static RedisServer start(List<String> extraArgs) {
        RedisServer server = startUnmarked(extraArgs);
        if (!extraArgs.contains("--replicaof")) {
            try {
                server.markLockDelayPassed(0, DEFAULT_PREFIX);
            } catch (RuntimeException e) {
                server.close();
                throw e;
            }
        }
        return server;
    }

    /**
     * Starts a server as just installed: no lock-delay marker, so the first acquire of a client
     * with a lock-delay starts one.
     *
     * @param extraArgs options appended to the command line
     * @return the started server
     */
    static RedisServer startUnmarked(List<String> extraArgs) {
        RedisServer server = new RedisServer(extraArgs, false);
        server.startOnFreePort();
        return server;
    }

    /**
     * Marks this server process as past dlock's lock-delay for a prefix: only for a server the
     * test knows has never granted a lock of that prefix (a lease from before could otherwise
     * still be valid). Uses the {@code --requirepass} password of the command line, if any.
     *
     * @param database the database
     * @param prefix the key prefix, e.g. {@code dlock:}
     */
    void markLockDelayPassed(int database, String prefix) {
        markLockDelayPassed(database, prefix, DefaultJedisClientConfig.builder());
    }

    /**
     * As {@link #markLockDelayPassed(int, String)}, over TLS.
     *
     * @param database the database
     * @param prefix the key prefix
     * @param sslSocketFactory trusts this server's certificate
     */
    void markLockDelayPassed(int database, String prefix, SSLSocketFactory sslSocketFactory) {
        markLockDelayPassed(database, prefix, DefaultJedisClientConfig.builder().ssl(true)
                .sslSocketFactory(sslSocketFactory));
    }

    private void markLockDelayPassed(int database, String prefix, DefaultJedisClientConfig.Builder config) {
        int pw = extraArgs.indexOf("--requirepass");
        if (pw >= 0) {
            config.password(extraArgs.get(pw + 1));
        }
        try (Jedis jedis = new Jedis(new HostAndPort(HOST, port), config.database(database).build())) {
            jedis.eval(MARK_LOCK_DELAY_PASSED, List.of(prefix + "epoch"), List.of());
        }
    }

    /**
     * Starts a server that speaks only TLS, with the given PEM certificate and key.
     *
     * @param cert the server certificate
     * @param key its private key
     * @return the started server
     */
    static RedisServer startTls(Path cert, Path key) {
        return startTls(cert, key, List.of());
    }

    /**
     * Starts a server that speaks only TLS, with extra options (e.g. {@code --tls-replication yes}).
     * Not marked past the lock-delay: see {@link #markLockDelayPassed(int, String, SSLSocketFactory)}.
     *
     * @param cert the server certificate
     * @param key its private key
     * @param extraArgs options appended to the command line
     * @return the started server
     */
    static RedisServer startTls(Path cert, Path key, List<String> extraArgs) {
        RedisServer server = new RedisServer(tlsArgs(cert, key, extraArgs), true);
        server.startOnFreePort();
        return server;
    }

    private static List<String> tlsArgs(Path cert, Path key, List<String> extraArgs) {
        List<String> args = new ArrayList<>(List.of("--tls-cert-file", cert.toString(), "--tls-key-file",
                key.toString(), "--tls-ca-cert-file", cert.toString(), "--tls-auth-clients", "no"));
        args.addAll(extraArgs);
        return args;
    }

    /**
     * Starts a Sentinel ({@code redis-server sentinel.conf --sentinel}) on a free loopback port.
     *
     * @param confLines the lines of its configuration file, e.g. {@code sentinel monitor ...}
     * @param extraArgs options appended to the command line
     * @return the started sentinel
     */
    static RedisServer startSentinel(List<String> confLines, List<String> extraArgs) {
        return startSentinel(confLines, extraArgs, null, null);
    }

    /**
     * Starts a Sentinel that speaks only TLS (to clients, and with {@code tls-replication yes} in its
     * configuration, to the data nodes), or plain if {@code cert} is null.
     *
     * @param confLines the lines of its configuration file
     * @param extraArgs options appended to the command line
     * @param cert the certificate, or null for plain
     * @param key its private key, or null
     * @return the started sentinel
     */
    static RedisServer startSentinel(List<String> confLines, List<String> extraArgs, Path cert, Path key) {
        List<String> args = new ArrayList<>(extraArgs);
        args.add("--sentinel");
        RedisServer server = new RedisServer(cert == null ? args : tlsArgs(cert, key, args), cert != null);
        try {
            server.conf = server.dir.resolve("sentinel.conf");
            Files.write(server.conf, confLines, StandardCharsets.UTF_8);
            server.startOnFreePort();
            return server;
        } catch (IOException | RuntimeException e) {
            server.close();
            throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
        }
    }

    /** @return the path of redis-server, or fails with what to install */
    static String binary() {
        List<Path> candidates = new ArrayList<>();
        String path = System.getenv("PATH");
        if (path != null) {
            for (String d : path.split(java.io.File.pathSeparator)) {
                if (!d.isEmpty()) {
                    candidates.add(Path.of(d, "redis-server"));
                }
            }
        }
        candidates.add(Path.of("/usr/bin/redis-server"));
        candidates.add(Path.of("/usr/local/bin/redis-server"));
        for (Path p : candidates) {
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        throw new IllegalStateException("redis-server is not installed (looked in PATH, /usr/bin and /usr/local/bin):"
                + " the dlock-redis tests run a real Redis server; install it, e.g. apt-get install redis-server");
    }

    int port() {
        return port;
    }

    public InetSocketAddress address() {
        return new InetSocketAddress(HOST, port);
    }

    /** @return {@code redis://127.0.0.1:PORT} */
    public String uri() {
        return (tls ? "rediss://" : "redis://") + HOST + ":" + port;
    }

    long pid() {
        return process.pid();
    }

    /** @return where the server writes its log */
    Path log() {
        return dir.resolve("redis.log");
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
        List<String> cmd = new ArrayList<>(List.of(binary()));
        if (conf != null) {
            cmd.add(conf.toString());
        }
        cmd.addAll(List.of("--bind", HOST,
                "--save", "", "--appendonly", "no", "--dir", dir.toString(), "--daemonize", "no",
                "--logfile", "", "--protected-mode", "no"));
        if (tls) {
            cmd.addAll(List.of("--port", "0", "--tls-port", Integer.toString(port)));
        } else {
            cmd.addAll(List.of("--port", Integer.toString(port)));
        }
        cmd.addAll(extraArgs);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log().toFile()));
        try {
            process = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start " + cmd.get(0), e);
        }
        paused = false;
        logMark = Files.exists(log()) ? readLog().length() : 0;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MILLIS);
        while (System.nanoTime() - deadline < 0) {
            if (!process.isAlive()) {
                throw new IllegalStateException("redis-server exited with " + process.exitValue() + " on port " + port
                        + "; its log:\n" + readLog());
            }
            if (ready()) {
                return;
            }
            sleep(20);
        }
        process.destroyForcibly();
        throw new IllegalStateException("redis-server did not answer on port " + port + " within "
                + START_TIMEOUT_MILLIS + " ms; its log:\n" + readLog());
    }

    private boolean ready() {
        if (tls) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(HOST, port), 200);
            } catch (IOException e) {
                return false;
            }
            String log = readLog();
            return log.length() > logMark && (log.substring(logMark).contains("Ready to accept connections")
                    || log.substring(logMark).contains("Sentinel ID is")); // a sentinel says this instead
        }
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(HOST, port), 200);
            s.setSoTimeout(1000);
            OutputStream out = s.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String line = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII))
                    .readLine();
            // +PONG, or -NOAUTH when a password is required: either way the server answers
            return line != null && (line.startsWith("+PONG") || line.startsWith("-NOAUTH"));
        } catch (IOException e) {
            return false;
        }
    }

    String readLog() {
        try {
            return Files.exists(log()) ? Files.readString(log(), StandardCharsets.UTF_8) : "(no log)";
        } catch (IOException e) {
            return "(log unreadable: " + e + ")";
        }
    }

    /** Suspends the process with SIGSTOP: connections stay open and nothing is answered. */
    void pause() {
        ServerProcesses.signal(process, "STOP");
        paused = true;
    }

    /** @return whether the process is paused by {@link #pause()} */
    boolean isPaused() {
        return paused;
    }

    /** @return whether the process runs (it may be paused) */
    boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** Resumes a paused process with SIGCONT. */
    void resume() {
        ServerProcesses.signal(process, "CONT");
        paused = false;
    }

    /** Kills the process with SIGKILL and waits until it is gone. Every key is lost. */
    void kill() {
        ServerProcesses.killAndWait(process, "redis-server");
        paused = false;
    }

    /** Starts the server again on the same port, after {@link #kill()}; retries while the port is busy. */
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



    /** Stops the server and deletes its directory. */
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
        ServerProcesses.deleteTree(dir);
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
            throw new IllegalStateException("interrupted while waiting for redis-server", e);
        }
    }

    @Override
    public String toString() {
        return "RedisServer{" + uri() + ", pid " + (process == null ? "-" : process.pid()) + "}";
    }
}
