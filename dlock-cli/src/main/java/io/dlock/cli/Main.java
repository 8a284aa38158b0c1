package io.dlock.cli;

import io.dlock.LockBackendException;
import io.dlock.LockConfigurationException;
import io.dlock.LockOptions;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The {@code dlock} command: distributed locks with fencing tokens from the shell. Subcommands
 * {@code demo}, {@code exec}, {@code elect}, {@code status}, {@code tck} and {@code bench}; exit statuses in
 * {@link ExitCodes}.
 */
@Command(name = "dlock", mixinStandardHelpOptions = true, usageHelpAutoWidth = true, versionProvider = Main.Version.class,
        header = "Distributed locks with fencing tokens, for every backend, from the shell.",
        description = {
            "The backend is chosen by the scheme of its URI: redis, rediss, zookeeper, zk, etcd, dynamodb, or mem "
                    + "(in this process only, for trying things out). Commands that need a backend take --uri URI, "
                    + "or read the DLOCK_URI environment variable.",
            ""},
        subcommands = {DemoCommand.class, ExecCommand.class, ElectCommand.class, StatusCommand.class,
            TckCommand.class, BenchCommand.class, CommandLine.HelpCommand.class},
        footer = {"", "URIs:",
            "  redis://[user:password@]host:port[/db]        rediss:// for TLS",
            "  zookeeper://host:port[,host:port...][/chroot][?sessionTimeout=PT30S]",
            "  etcd://host:port[,host:port...]",
            "  dynamodb://TABLE?region=eu-west-1[&endpoint=http://localhost:8000]",
            "  mem://NAME                                    in this process only",
            "",
            "Start with: dlock demo",
            "Details: dlock help COMMAND, and docs/CLI.md"})
public final class Main implements Runnable {

    @Option(names = {"-v", "--verbose"}, scope = CommandLine.ScopeType.INHERIT,
            description = "Log what dlock and the backend's client library do (to standard error).")
    private boolean verbose;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    /** For picocli. */
    public Main() { }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a command is needed: demo, exec, elect, status, tck or bench");
    }

    /**
     * Runs the command and exits with its status.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        System.exit(run(args));
    }

    /**
     * Runs the command.
     *
     * @param args the command line
     * @return the exit status, see {@link ExitCodes}
     */
    public static int run(String... args) {
        configureLogging(args);
        return commandLine(System.out, System.err).execute(args);
    }

    /**
     * Builds the command line, with dlock's error handling and exit statuses.
     *
     * @param out standard output
     * @param err standard error
     * @return the command line
     */
    static CommandLine commandLine(PrintStream out, PrintStream err) {
        CommandLine cl = new CommandLine(new Main());
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        Map<String, String> codes = new LinkedHashMap<>();
        for (String line : ExitCodes.helpList()) {
            int colon = line.indexOf(':');
            codes.put(line.substring(0, colon), line.substring(colon + 1));
        }
        cl.getCommandSpec().usageMessage().exitCodeListHeading("%nExit status:%n").exitCodeList(codes);
        for (CommandLine sub : cl.getSubcommands().values()) {
            if (!"help".equals(sub.getCommandName())) {
                sub.getCommandSpec().usageMessage().exitCodeListHeading("%nExit status:%n").exitCodeList(codes);
            }
        }
        // `dlock exec --name x sh -c '...'`: everything from CMD on belongs to CMD, options included
        cl.getSubcommands().get("exec").setStopAtPositional(true);
        cl.getSubcommands().get("elect").setStopAtPositional(true);
        cl.setParameterExceptionHandler((ex, args) -> {
            CommandLine c = ex.getCommandLine();
            c.getErr().println("dlock: " + ex.getMessage());
            c.getErr().println("Try '" + c.getCommandSpec().qualifiedName() + " --help'.");
            return ExitCodes.USAGE;
        });
        cl.setExecutionExceptionHandler((ex, c, parseResult) -> {
            PrintWriter e = c.getErr();
            if (ex instanceof CliException ce) {
                e.println("dlock: " + ce.getMessage());
                return ce.exitCode();
            }
            if (ex instanceof LockConfigurationException lce) {
                e.println("dlock: the backend refuses the configuration (" + BackendOptions.describe(lce.kind())
                        + "); retrying will not help: " + ex.getMessage());
                return ExitCodes.USAGE;
            }
            if (ex instanceof LockBackendException) {
                e.println("dlock: the backend failed: " + ex.getMessage());
                return ExitCodes.UNREACHABLE;
            }
            if (ex instanceof IllegalArgumentException) {
                e.println("dlock: " + ex.getMessage());
                return ExitCodes.USAGE;
            }
            if (ex instanceof InterruptedException) {
                e.println("dlock: interrupted");
                return 130;
            }
            e.println("dlock: unexpected error: " + ex);
            ex.printStackTrace(e);
            return ExitCodes.FAILED;
        });
        return cl;
    }

    /**
     * Lock options with a lease time (renewed every third of it).
     *
     * @param lease the lease time
     * @return the options
     * @throws CliException with {@link ExitCodes#USAGE} if the lease time is not positive
     */
    static LockOptions lockOptions(Duration lease) {
        try {
            return LockOptions.builder().leaseTime(lease).build();
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, "--lease: " + e.getMessage(), e);
        }
    }

    /**
     * Makes a lock handle, turning a lease time the backend does not allow into a usage error that
     * names the option.
     *
     * @param client the client
     * @param name the lock's name
     * @param options the lock options, from {@code --lease}
     * @return the handle
     * @throws CliException with {@link ExitCodes#USAGE} for a bad name or lease time
     */
    static io.dlock.DistributedLock lock(io.dlock.LockClient client, String name, LockOptions options) {
        try {
            return client.lock(name, options);
        } catch (IllegalArgumentException e) {
            String option = e.getMessage() != null && e.getMessage().startsWith("leaseTime")
                    ? "--lease " + Durations.format(options.leaseTime()) : "--name";
            throw new CliException(ExitCodes.USAGE, option + ": " + e.getMessage(), e);
        }
    }

    /**
     * Sets slf4j-simple's levels before the first logger exists: quiet by default (dlock's warnings
     * only; the demo and the TCK not even those, since they lose leases on purpose), everything
     * with -v.
     */
    private static void configureLogging(String[] args) {
        boolean verbose = false;
        String command = null;
        for (String a : args) {
            if ("--".equals(a)) {
                break;
            }
            if ("-v".equals(a) || "--verbose".equals(a)) {
                verbose = true;
            } else if (command == null && !a.startsWith("-")) {
                command = a;
            }
        }
        if (verbose) {
            setIfAbsent("org.slf4j.simpleLogger.defaultLogLevel", "info");
            setIfAbsent("org.slf4j.simpleLogger.log.io.dlock", "debug");
            setIfAbsent("org.slf4j.simpleLogger.log.org.apache.zookeeper", "warn");
            setIfAbsent("org.slf4j.simpleLogger.log.org.apache.curator", "warn");
            setIfAbsent("org.slf4j.simpleLogger.log.io.etcd", "warn");
            setIfAbsent("org.slf4j.simpleLogger.showThreadName", "true");
            setIfAbsent("org.slf4j.simpleLogger.showDateTime", "true");
        } else if ("demo".equals(command) || "tck".equals(command)) {
            // both lose leases on purpose: the warnings would only clutter their tables
            setIfAbsent("org.slf4j.simpleLogger.log.io.dlock", "error");
        }
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    /** The version from the jar's manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Main.class.getPackage().getImplementationVersion();
            return new String[] {"dlock " + (v == null ? "(development build)" : v), "Java " + System.getProperty("java.version")};
        }
    }
}
