package io.dlock.cli;

import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockLostException;
import io.dlock.LockOptions;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code dlock exec}: runs a command while holding a lock. */
@Command(name = "exec", sortOptions = false, mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
        header = "Run a command while holding a lock.",
        description = {
            "Waits for the lock, then runs CMD (its input and output are dlock's) with these in its environment:",
            "  DLOCK_LOCK_NAME      the lock's name",
            "  DLOCK_FENCING_TOKEN  this grant's fencing token",
            "Pass the token with every write to the resource the lock protects, and have the resource refuse a "
                    + "token lower than the highest it has seen.",
            "The lease is renewed while CMD runs and released when it exits. CMD runs in a process group of its "
                    + "own under a watchdog outside this JVM. If the lease is lost (the backend cannot be reached "
                    + "for a lease time, say), CMD's process group gets SIGTERM at once, and SIGKILL after --grace "
                    + "or when the lease's validity ends, whichever is first; dlock then exits with 4. If dlock "
                    + "itself is killed, the watchdog stops CMD at once; if dlock freezes, before the lease's "
                    + "validity ends. On SIGTERM or SIGINT, dlock stops CMD the same way and releases the lock.",
            ""},
        footer = {"", "Example:",
            "  dlock exec --uri redis://127.0.0.1:6379 --name nightly-report \\",
            "      --wait 30s -- ./report.sh --date today"})
final class ExecCommand implements Callable<Integer> {

    @Mixin
    private BackendOptions backend;

    @Option(names = {"-n", "--name"}, required = true, paramLabel = "NAME", description = "The lock's name.")
    private String name;

    @Option(names = {"-w", "--wait"}, paramLabel = "DURATION", converter = Durations.class,
            description = "How long to wait for the lock; 0 tries once. Default: as long as it takes. "
                    + "Exit status 3 when it runs out.")
    private Duration wait;

    @Option(names = {"-l", "--lease"}, paramLabel = "DURATION", defaultValue = "15s", converter = Durations.class,
            description = "The lease time: how long the lock outlives a crash of this process; renewed every third "
                    + "of it while CMD runs (default: ${DEFAULT-VALUE}).")
    private Duration lease;

    @Option(names = {"-g", "--grace"}, paramLabel = "DURATION", defaultValue = "10s", converter = Durations.class,
            description = "How long CMD gets to exit after SIGTERM before SIGKILL, cut short by the end of the "
                    + "lease's validity (default: ${DEFAULT-VALUE}).")
    private Duration grace;

    @Parameters(arity = "1..*", paramLabel = "CMD", description = "The command and its arguments (put -- before it).")
    private List<String> command;

    private final Object cleanupLock = new Object();
    private volatile LockClient client;
    private volatile Lease held;
    private volatile Child child;
    private volatile boolean stopping;
    /** The acquire failed for the backend: the client is closed without waiting for it. */
    private volatile boolean backendFailed;

    @Override
    public Integer call() throws InterruptedException {
        PrintStream err = System.err;
        LockOptions options = Main.lockOptions(lease);
        client = backend.open(options);
        Thread hook = new Thread(this::cleanup, "dlock-exec-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            Optional<Lease> granted;
            DistributedLock lock = Main.lock(client, name, options);
            try {
                granted = wait == null ? Optional.of(lock.acquire()) : lock.tryAcquire(wait);
            } catch (LockBackendException e) {
                backendFailed = true;
                throw BackendOptions.failure(backend.uri(), e);
            } catch (IllegalStateException e) {
                if (stopping) {
                    return 130; // SIGINT or SIGTERM while waiting: the shutdown hook closed the client
                }
                throw e;
            }
            if (granted.isEmpty()) {
                err.println("dlock: lock '" + name + "' is held by someone else; not acquired within "
                        + Durations.format(wait));
                return ExitCodes.NOT_ACQUIRED;
            }
            Lease lease = granted.get();
            held = lease;
            AtomicReference<LockLostException> lost = new AtomicReference<>();
            Child c = Child.start(command, Map.of(
                    "DLOCK_LOCK_NAME", name,
                    "DLOCK_FENCING_TOKEN", Long.toString(lease.fencingToken())),
                    lease::remaining, options.renewInterval(), grace);
            child = c;
            lease.onLost(e -> {
                lost.compareAndSet(null, e);
                c.terminate(); // at once, on the dlock thread that reports the loss: before anyone else can hold the lock
            });
            while (!c.waitFor(Duration.ofMillis(50))) {
                if (lost.get() != null) {
                    break;
                }
            }
            if (lost.get() != null) {
                LockLostException e = lost.get();
                int status = c.stop();
                err.println("dlock: lease on lock '" + name + "' (token " + e.fencingToken() + ") lost (" + e.reason()
                        + "); stopped '" + c.label() + "' (it exited with " + status + ")");
                return ExitCodes.LEASE_LOST;
            }
            return c.exitValue();
        } finally {
            cleanup();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // the JVM is shutting down already: the hook runs the same clean-up
            }
        }
    }

    /** Stops the command if it still runs, releases the lock, closes the client. Idempotent. */
    private void cleanup() {
        stopping = true;
        synchronized (cleanupLock) {
            Child c = child;
            if (c != null && c.isAlive()) {
                c.stop();
            }
            Lease l = held;
            boolean lost = l != null && !l.isValid();
            if (l != null) {
                l.release();
            }
            LockClient cl = client;
            client = null;
            if (cl != null) {
                if (lost) {
                    // the backend is most likely unreachable (the release above was tried and logged)
                    BackendOptions.closeBriefly(cl, Duration.ofSeconds(1));
                } else if (backendFailed) {
                    BackendOptions.closeBriefly(cl, BackendOptions.CLOSE_AFTER_FAILURE);
                } else {
                    cl.close();
                }
            }
        }
    }
}
