package io.dlock.postgres;

import io.dlock.tck.ServerProcesses;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real PostgreSQL server for tests: {@code initdb} in a temporary directory, {@code postgres} on
 * a free loopback port with its Unix socket in that directory; a signal goes to the postmaster and
 * every process under it: pause (SIGSTOP to all of them), resume, kill (SIGKILL to all; the next start runs crash recovery) and restart on the same
 * data directory and port. PostgreSQL refuses to run as root, so when the tests run as root the
 * server runs as the {@code postgres} user (Debian's package creates it), through {@code setpriv}.
 *
 * <p>Authentication: the superuser {@code postgres} has the password {@link #SUPERUSER_PASSWORD};
 * TCP connections use SCRAM ({@code scram-sha-256}), the Unix socket trusts. A TLS server
 * ({@link #startTls}) takes a PEM certificate and key. {@code fsync} is off for speed, which a
 * process kill does not make unsafe (the operating system keeps what was written).
 */
public final class PostgresServer implements AutoCloseable {

    static final String HOST = "127.0.0.1";
    static final String SUPERUSER = "postgres";
    static final String SUPERUSER_PASSWORD = "pg-test-superuser";

    /** Debian's layout: /usr/lib/postgresql/VERSION/bin; the newest version installed. */
    static final Path BIN = bin();
    private static final long START_TIMEOUT_MILLIS = 60_000;

    private final Path dir;
    private final Path data;
    private final Path log;
    private final List<String> extra;
    private final int port;
    private Process process;
    private boolean paused;

    private PostgresServer(List<String> extra) {
        this.extra = List.copyOf(extra);
        try {
            this.dir = Files.createTempDirectory("dlock-pg-test-");
            this.data = dir.resolve("data");
            this.log = dir.resolve("postgres.log");
            asServerUser(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        initdb();
        this.port = ServerProcesses.freeLoopbackPort();
    }

    /** @return a started server with SCRAM authentication over TCP */
    public static PostgresServer start() {
        return start(List.of());
    }

    /**
     * Starts a server with extra {@code -c name=value} settings.
     *
     * @param settings e.g. {@code ssl=on}
     * @return the started server
     */
    static PostgresServer start(List<String> settings) {
        PostgresServer s = new PostgresServer(settings);
        try {
            s.launchRetrying();
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        return s;
    }

    /**
     * Starts a server that offers TLS with the given certificate and key (PEM), copied into its
     * directory (PostgreSQL wants the key readable by its user only).
     *
     * @param cert the certificate
     * @param key its private key
     * @return the started server
     */
    static PostgresServer startTls(Path cert, Path key) {
        PostgresServer s = new PostgresServer(List.of("ssl=on"));
        try {
            Path c = s.dir.resolve("server.crt");
            Path k = s.dir.resolve("server.key");
            Files.copy(cert, c);
            Files.copy(key, k);
            Files.setPosixFilePermissions(k, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
            asServerUser(c);
            asServerUser(k);
            s.extra2.add("ssl_cert_file=" + c);
            s.extra2.add("ssl_key_file=" + k);
            s.launchRetrying();
        } catch (IOException e) {
            s.close();
            throw new UncheckedIOException(e);
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        return s;
    }

    private final List<String> extra2 = new ArrayList<>();

    private static Path bin() {
        Path root = Path.of("/usr/lib/postgresql");
        try (Stream<Path> versions = Files.list(root)) {
            return versions.filter(v -> v.getFileName().toString().matches("[0-9]+")
                            && Files.isExecutable(v.resolve("bin/postgres")))
                    .max(java.util.Comparator.comparingInt(v -> Integer.parseInt(v.getFileName().toString())))
                    .map(v -> v.resolve("bin")).orElse(root.resolve("15/bin"));
        } catch (IOException e) {
            return root.resolve("15/bin");
        }
    }

    /** @return whether the tests run as root, so the server must run as another user */
    private static boolean root() {
        return "root".equals(System.getProperty("user.name"));
    }

    private static void asServerUser(Path p) throws IOException {
        if (root()) {
            UserPrincipal user = p.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres");
            Files.setOwner(p, user);
        }
    }

    private List<String> command(String binary, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add("setsid");
        if (root()) {
            cmd.addAll(List.of("setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"));
        }
        Path b = BIN.resolve(binary);
        if (!Files.isExecutable(b)) {
            throw new IllegalStateException(b + " is not installed: the dlock-postgres tests run a real PostgreSQL"
                    + " server; install it, e.g. apt-get install postgresql (scripts/install-servers does)");
        }
        cmd.add(b.toString());
        cmd.addAll(List.of(args));
        return cmd;
    }

    private void initdb() {
        Path pw = dir.resolve("pwfile");
        try {
            Files.writeString(pw, SUPERUSER_PASSWORD + "\n", StandardCharsets.UTF_8);
            asServerUser(pw);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> cmd = command("initdb", "-D", data.toString(), "-U", SUPERUSER, "--pwfile=" + pw,
                "--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--locale=C", "--no-sync");
        run(cmd, "initdb");
    }

    private void run(List<String> cmd, String what) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(
                    ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException(what + " failed; its log:\n" + readLog());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not run " + cmd, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + what, e);
        }
    }

    private void launchRetrying() {
        IllegalStateException last = null;
        for (int i = 0; i < 20; i++) {
            try {
                launch();
                return;
            } catch (IllegalStateException e) {
                last = e; // the port may be in use for a moment after a kill
                sleep(250);
            }
        }
        throw last;
    }

    private void launch() {
        List<String> args = new ArrayList<>(List.of("-D", data.toString(), "-p", Integer.toString(port),
                "-k", dir.toString(), "-c", "listen_addresses=" + HOST, "-c", "fsync=off",
                "-c", "max_connections=300", "-c", "shared_buffers=16MB"));
        for (String s : extra) {
            args.add("-c");
            args.add(s);
        }
        for (String s : extra2) {
            args.add("-c");
            args.add(s);
        }
        List<String> cmd = command("postgres", args.toArray(new String[0]));
        try {
            process = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start " + cmd, e);
        }
        paused = false;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MILLIS);
        while (System.nanoTime() - deadline < 0) {
            if (!process.isAlive()) {
                throw new IllegalStateException("postgres exited with " + process.exitValue() + " on port " + port
                        + "; its log:\n" + readLog());
            }
            if (ready()) {
                return;
            }
            sleep(50);
        }
        killAll();
        throw new IllegalStateException("postgres did not answer on port " + port + " within " + START_TIMEOUT_MILLIS
                + " ms; its log:\n" + readLog());
    }

    private boolean ready() {
        try (Connection c = superuser("postgres")) {
            return c.isValid(2);
        } catch (SQLException e) {
            return false;
        }
    }

    /**
     * A connection as the superuser, over TCP.
     *
     * @param database the database
     * @return the connection
     * @throws SQLException if it fails
     */
    Connection superuser(String database) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", SUPERUSER);
        p.setProperty("password", SUPERUSER_PASSWORD);
        p.setProperty("connectTimeout", "5");
        p.setProperty("socketTimeout", "30");
        p.setProperty("sslmode", "disable");
        return DriverManager.getConnection("jdbc:postgresql://" + HOST + ":" + port + "/" + database, p);
    }

    /**
     * Runs SQL statements as the superuser, each in its own transaction.
     *
     * @param database the database
     * @param statements the statements
     */
    void sql(String database, String... statements) {
        try (Connection c = superuser(database); Statement s = c.createStatement()) {
            for (String sql : statements) {
                s.execute(sql);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("SQL on the test server failed: " + e.getMessage(), e);
        }
    }

    int port() {
        return port;
    }

    InetSocketAddress address() {
        return new InetSocketAddress(HOST, port);
    }

    /**
     * @param user the user
     * @param password the password
     * @param database the database
     * @return {@code postgresql://USER:PASSWORD@127.0.0.1:PORT/DATABASE}
     */
    String uri(String user, String password, String database) {
        return "postgresql://" + user + ":" + password + "@" + HOST + ":" + port + "/" + database;
    }

    String readLog() {
        try {
            return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "(no log)";
        } catch (IOException e) {
            return "(log unreadable: " + e + ")";
        }
    }

    /**
     * Sends a signal to the postmaster and every process under it. Not a process-group signal:
     * PostgreSQL makes each backend the leader of a process group of its own (so that the
     * postmaster can signal a backend's children), so the postmaster's group holds only itself.
     * The postmaster is stopped first (then it forks nothing new) and continued last.
     */
    private void signalAll(String signal) {
        List<ProcessHandle> children = process.toHandle().descendants().toList();
        List<Long> pids = new ArrayList<>();
        if (!signal.equals("CONT")) {
            pids.add(process.pid());
        }
        children.forEach(c -> pids.add(c.pid()));
        if (signal.equals("CONT")) {
            pids.add(process.pid());
        }
        List<String> cmd = new ArrayList<>(List.of("kill", "-" + signal, "--"));
        pids.forEach(p -> cmd.add(Long.toString(p)));
        try {
            Process kill = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            if (!kill.waitFor(10, TimeUnit.SECONDS)) {
                kill.destroyForcibly();
                throw new IllegalStateException("kill -" + signal + " " + pids + " did not finish");
            }
            // a backend that exited meanwhile makes kill fail for its pid alone: the rest got the signal
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sending " + signal, e);
        }
    }

    /** Stops the postmaster and every backend (SIGSTOP): connections stay open, nothing is answered. */
    void pause() {
        signalAll("STOP");
        paused = true;
    }

    /** Resumes a paused server (SIGCONT). */
    void resume() {
        signalAll("CONT");
        paused = false;
    }

    /** Kills the postmaster and every backend (SIGKILL) and waits until they are gone. */
    void kill() {
        killAll();
        paused = false;
    }

    private void killAll() {
        if (process == null) {
            return;
        }
        List<ProcessHandle> all = new ArrayList<>(process.toHandle().descendants().toList());
        if (process.isAlive()) {
            try {
                signalAll("KILL");
            } catch (IllegalStateException e) {
                // some are gone already; the rest are waited for below
            }
        }
        ServerProcesses.killAndWait(process, "postgres");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (ProcessHandle h : all) {
            h.destroyForcibly();
            while (h.isAlive() && System.nanoTime() - deadline < 0) {
                sleep(10);
            }
        }
    }

    /** Starts the server again on the same data directory and port after {@link #kill()}: crash recovery. */
    void restart() {
        if (process != null && process.isAlive()) {
            kill();
        }
        launchRetrying();
    }

    /** Stops the server and deletes its directory. */
    @Override
    public void close() {
        if (process != null) {
            if (paused) {
                try {
                    resume();
                } catch (RuntimeException ignored) {
                    // killed below anyway
                }
            }
            killAll();
        }
        ServerProcesses.deleteTree(dir);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for postgres", e);
        }
    }

    @Override
    public String toString() {
        return "PostgresServer{" + HOST + ":" + port + ", pid " + (process == null ? "-" : process.pid()) + "}";
    }
}
