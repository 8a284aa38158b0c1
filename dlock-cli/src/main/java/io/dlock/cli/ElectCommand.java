package io.dlock.cli;

import io.dlock.ElectionListener;
import io.dlock.ElectionOptions;
import io.dlock.LeaderElection;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.RevokeReason;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code dlock elect}: runs a command only while this process is the elected leader. */
@Command(name = "elect", sortOptions = false, mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
        header = "Run a command only while leader.",
        description = {
            "Joins the election NAME and runs CMD whenever this process is elected, with these in its environment:",
            "  DLOCK_LOCK_NAME      the election's name (the name of the lock behind it)",
            "  DLOCK_TERM           the term: this leadership's fencing token, higher for each new leader",
            "  DLOCK_FENCING_TOKEN  the same number",
            "CMD runs in a process group of its own under a watchdog outside this JVM. If the leadership is lost, "
                    + "CMD's process group gets SIGTERM at once and SIGKILL after --grace (or when the term's "
                    + "validity ends, if sooner), and dlock contends again; when elected again it starts CMD again, "
                    + "with the new term. If dlock itself is killed or freezes, the watchdog stops CMD before the "
                    + "term's validity ends.",
            "When CMD exits by itself while leading, dlock leaves the election (another candidate takes over) and "
                    + "exits with CMD's status. On SIGTERM or SIGINT it stops CMD and leaves the election.",
            ""},
        footer = {"", "Example (on every node; one of them runs the scheduler at a time):",
            "  dlock elect --uri zookeeper://zk1:2181,zk2:2181 --name billing-scheduler \\",
            "      -- ./scheduler --serve"})
final class ElectCommand implements Callable<Integer> {

    @Mixin
    private BackendOptions backend;

    @Option(names = {"-n", "--name"}, required = true, paramLabel = "NAME", description = "The election's name.")
    private String name;

    @Option(names = {"-l", "--lease"}, paramLabel = "DURATION", defaultValue = "15s", converter = Durations.class,
            description = "The lease time: how long a crashed leader keeps the leadership (default: ${DEFAULT-VALUE}).")
    private Duration lease;

    @Option(names = {"-g", "--grace"}, paramLabel = "DURATION", defaultValue = "10s", converter = Durations.class,
            description = "How long CMD gets to exit after SIGTERM before SIGKILL, cut short by the end of the "
                    + "term's validity (default: ${DEFAULT-VALUE}).")
    private Duration grace;

    @Parameters(arity = "1..*", paramLabel = "CMD", description = "The command and its arguments (put -- before it).")
    private List<String> command;

    private sealed interface Event permits Elected, Revoked, Exited { }

    private record Elected(long term) implements Event { }

    private record Revoked(RevokeReason reason) implements Event { }

    private record Exited(Child child) implements Event { }

    private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private final Object cleanupLock = new Object();
    private volatile LockClient client;
    private volatile LeaderElection election;
    private volatile Child running;
    private volatile boolean stopping;

    @Override
    public Integer call() throws InterruptedException {
        PrintStream err = System.err;
        LockOptions options = Main.lockOptions(lease);
        client = backend.open(options);
        Thread hook = new Thread(this::cleanup, "dlock-elect-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            Main.lock(client, name, options); // a bad name or lease time is a usage error naming the option
            election = LeaderElection.create(client, name, ElectionOptions.builder().lockOptions(options).build(),
                    new ElectionListener() {
                        @Override
                        public void onElected(long term) {
                            events.add(new Elected(term));
                        }

                        @Override
                        public void onRevoked(RevokeReason reason) {
                            Child c = running;
                            if (c != null) {
                                c.terminate(); // at once: before the lock can be granted to another candidate
                            }
                            events.add(new Revoked(reason));
                        }
                    });
            election.start();
            err.println("dlock: contending for leadership of '" + name + "'");
            long term = 0;
            while (true) {
                Event event = events.take();
                if (event instanceof Elected e) {
                    if (!election.term().equals(OptionalLong.of(e.term()))) {
                        continue; // already lost again; its Revoked follows
                    }
                    term = e.term();
                    long leading = term;
                    // the watchdog of this run of CMD reads the validity of this term only
                    Supplier<Duration> remaining = () -> {
                        OptionalLong before = election.term();
                        Duration left = election.remaining();
                        return before.equals(OptionalLong.of(leading)) && election.term().equals(before)
                                ? left : Duration.ZERO;
                    };
                    Child c = Child.start(command, Map.of(
                            "DLOCK_LOCK_NAME", name,
                            "DLOCK_TERM", Long.toString(term),
                            "DLOCK_FENCING_TOKEN", Long.toString(term)),
                            remaining, options.renewInterval(), grace);
                    running = c;
                    c.onExit().thenRun(() -> events.add(new Exited(c)));
                    err.println("dlock: elected leader of '" + name + "' (term " + term + "); started '" + c.label()
                            + "'");
                } else if (event instanceof Revoked r) {
                    Child c = running;
                    running = null;
                    if (c != null) {
                        int status = c.stop();
                        err.println("dlock: leadership of '" + name + "' (term " + term + ") ended (" + r.reason()
                                + "); stopped '" + c.label() + "' (it exited with " + status + ")");
                    }
                    if (r.reason() == RevokeReason.CLOSED || stopping) {
                        return ExitCodes.FAILED;
                    }
                    err.println("dlock: contending for leadership of '" + name + "' again");
                } else if (event instanceof Exited x && x.child() == running) {
                    running = null;
                    int status = x.child().exitValue();
                    err.println("dlock: '" + x.child().label() + "' exited with " + status + " while leading (term "
                            + term + "); leaving the election");
                    election.close();
                    return status;
                }
            }
        } finally {
            cleanup();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // the JVM is shutting down already: the hook runs the same clean-up
            }
        }
    }

    /** Stops the command if it runs, leaves the election, closes the client. Idempotent. */
    private void cleanup() {
        synchronized (cleanupLock) {
            stopping = true;
            Child c = running;
            if (c != null && c.isAlive()) {
                c.stop();
            }
            LeaderElection e = election;
            if (e != null) {
                e.close();
            }
            LockClient cl = client;
            if (cl != null) {
                cl.close();
            }
        }
    }
}
