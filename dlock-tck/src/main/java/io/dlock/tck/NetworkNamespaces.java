package io.dlock.tck;

import io.dlock.spi.support.Arguments;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Linux network namespaces for tests that need a real network partition between server processes,
 * through the {@code unshare}, {@code nsenter} and {@code ip} commands (root only). A namespace
 * here is never named: it belongs to one process (started with {@code unshare --net}) and
 * disappears with it, together with the interfaces in it, so nothing is left behind on the host
 * even if the test JVM is killed. {@link PeerNetwork} builds the usual topology on these
 * primitives (one namespace per server, a bridge between them, a port per server that can be set
 * down); {@link SocketForwarder} gives the test's clients a loopback address for a server in a
 * namespace. Without root or the commands, or with the system property
 * {@value #DISABLE_PROPERTY}{@code =false}, {@link #available()} is false and callers fall back to
 * plain loopback (and skip what needs a partition through a JUnit assumption). Stateless and
 * thread-safe.
 */
public final class NetworkNamespaces {

    /** The system property that, set to {@code false}, turns namespaces off where they would work. */
    public static final String DISABLE_PROPERTY = "dlock.tck.networkNamespaces";

    private static volatile Boolean available;

    private NetworkNamespaces() { }

    /**
     * Whether network namespaces can be made here: Linux, root, and the commands {@code unshare},
     * {@code nsenter} and {@code ip} present and working (probed once, by making a bridge in a
     * throw-away namespace), and not turned off with {@value #DISABLE_PROPERTY}{@code =false}.
     *
     * @return whether they can
     */
    public static boolean available() {
        Boolean a = available;
        if (a == null) {
            a = probe();
            available = a;
        }
        return a;
    }

    private static boolean probe() {
        if ("false".equalsIgnoreCase(System.getProperty(DISABLE_PROPERTY, "").trim())) {
            return false;
        }
        if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")
                || !Files.exists(Path.of("/proc/self/ns/net"))) {
            return false;
        }
        if (tool("unshare") == null || tool("nsenter") == null || tool("ip") == null) {
            return false;
        }
        try {
            Process p = new ProcessBuilder(tool("unshare"), "--net", "--", tool("ip"), "link", "add", "name", "probe0",
                    "type", "bridge").redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** @return the absolute path of a command in the usual directories, or null */
    static String tool(String name) {
        for (String dir : List.of("/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/sbin", "/usr/local/bin")) {
            Path p = Path.of(dir, name);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return null;
    }

    /**
     * Returns the command line that runs {@code command} in a new network namespace, once a line is
     * written to its standard input (so that the caller can set up the namespace's interfaces
     * first; {@link #release}); if the input ends without a line, it exits. The process keeps its
     * pid from {@code unshare} to {@code command}, so signals reach the command.
     *
     * @param command the command and its arguments
     * @return the command line to start
     */
    public static List<String> inNewNamespace(List<String> command) {
        Arguments.notNull("command", command);
        List<String> cmd = new ArrayList<>(List.of(tool("unshare"), "--net", "--", "/bin/sh", "-c",
                "read go && exec \"$0\" \"$@\""));
        cmd.addAll(command);
        return cmd;
    }

    /**
     * Lets a process started by {@link #inNewNamespace} go on to its command (and closes its
     * standard input).
     *
     * @param p the process
     * @throws UncheckedIOException if its input cannot be written (it died)
     */
    public static void release(Process p) {
        Arguments.notNull("p", p);
        try (OutputStream in = p.getOutputStream()) {
            in.write("go\n".getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
            throw new UncheckedIOException("could not start " + p.pid() + " in its namespace", e);
        }
    }

    /**
     * Waits until a process runs in a network namespace of its own ({@code unshare} has made it).
     *
     * @param p the process
     * @throws IllegalStateException if it dies or does not get there within 10 s, or on interrupt
     *     (flag kept)
     */
    public static void awaitOwnNamespace(Process p) {
        Arguments.notNull("p", p);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        String mine = namespaceOf("self");
        while (System.nanoTime() - deadline < 0) {
            if (!p.isAlive()) {
                throw new IllegalStateException("process " + p.pid() + " exited with " + p.exitValue()
                        + " before it had its network namespace");
            }
            String theirs = namespaceOf(Long.toString(p.pid()));
            if (theirs != null && !theirs.equals(mine)) {
                return;
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the namespace of " + p.pid(), e);
            }
        }
        throw new IllegalStateException("process " + p.pid() + " has no network namespace of its own after 10 s");
    }

    private static String namespaceOf(String pid) {
        try {
            return Files.readSymbolicLink(Path.of("/proc", pid, "ns", "net")).toString();
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Runs {@code ip} commands (one per line, as {@code ip -batch} reads them) in the network
     * namespace of a process, or in the caller's with {@code pid} 0.
     *
     * @param pid the process whose namespace, or 0
     * @param commands the commands, e.g. {@code link set dev x up}
     * @throws IllegalStateException if a command fails, with its output
     */
    public static void ip(long pid, String... commands) {
        Arguments.notNull("commands", commands);
        List<String> cmd = new ArrayList<>();
        if (pid != 0) {
            cmd.addAll(List.of(tool("nsenter"), "--target", Long.toString(pid), "--net"));
        }
        cmd.addAll(List.of(tool("ip"), "-batch", "-"));
        run(cmd, String.join("\n", commands) + "\n");
    }

    private static void run(List<String> cmd, String input) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            try (OutputStream in = p.getOutputStream()) {
                in.write(input.getBytes(StandardCharsets.UTF_8));
            }
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", cmd) + " failed on input [" + input.trim()
                        + "]: " + new String(out, StandardCharsets.UTF_8).trim());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + cmd, e);
        }
    }
}
