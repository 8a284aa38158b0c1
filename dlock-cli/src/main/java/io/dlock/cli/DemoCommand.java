package io.dlock.cli;

import io.dlock.Lease;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.spi.BackendUri;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code dlock demo}: the seed scenario, on an embedded ZooKeeper server or any backend. */
@Command(name = "demo", sortOptions = false, mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
        header = "Show why a payment service needs locks with fencing tokens.",
        description = {
            "Several replicas of a payment service, each its own client of the backend, process the same payments "
                    + "in three phases. (1) No lock: replicas that check 'already charged?' at the same moment both "
                    + "charge. (2) With dlock: each payment runs under the lock payment:<order>, so no order is "
                    + "charged twice. (3) A replica stalls longer than its lease (as in a long GC pause); another "
                    + "takes the lock and charges; the stalled one wakes up and writes anyway, and the ledger "
                    + "rejects its lower fencing token.",
            "With a postgresql:// URI the ledger is a real table in that database, SCHEMA.dlock_demo_ledger, "
                    + "guarded by a fence column: UPDATE ... SET fence = :token WHERE ... AND fence <= :token.",
            "Runs on a ZooKeeper server embedded in this process unless --uri names a backend. Exits with 0 when "
                    + "phase 2 has no double charge and phase 3's stale write was rejected, 1 otherwise.",
            ""},
        footer = {"", "Examples:", "  dlock demo", "  dlock demo --uri redis://127.0.0.1:6379 --replicas 5 --payments 50",
            "  dlock demo --uri postgresql://dlock:secret@127.0.0.1:5432/payments"})
final class DemoCommand implements java.util.concurrent.Callable<Integer> {

    /** How long the simulated call to the payment provider takes: the window of the race. */
    private static final long WORK_MILLIS = 5;

    @Option(names = {"-u", "--uri"}, paramLabel = "URI",
            description = "Run against this backend instead of the embedded ZooKeeper server.")
    private String uri;

    @Option(names = {"-r", "--replicas"}, paramLabel = "N", defaultValue = "3",
            description = "How many replicas (separate clients) race (default: ${DEFAULT-VALUE}).")
    private int replicas;

    @Option(names = {"-p", "--payments"}, paramLabel = "N", defaultValue = "30",
            description = "How many payments each replica processes (default: ${DEFAULT-VALUE}).")
    private int payments;

    @Option(names = {"-l", "--lease"}, paramLabel = "DURATION", defaultValue = "2s", converter = Durations.class,
            description = "The lease time; phase 3 waits about this long (default: ${DEFAULT-VALUE}).")
    private Duration lease;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "20261121",
            description = "The seed of the replicas' timing jitter (default: ${DEFAULT-VALUE}).")
    private long seed;

    @Option(names = "--operation-timeout", paramLabel = "DURATION", defaultValue = "5s", converter = Durations.class,
            description = "The longest one backend call may take (default: ${DEFAULT-VALUE}).")
    private Duration operationTimeout;

    /** The PostgreSQL URI whose database holds the ledger table, or null for a ledger in memory. */
    private String ledgerUri;
    private String ledgerPrefix;

    /** One phase's figures for the table. */
    private record Outcome(String phase, int payments, int charges, int doubleCharges, String staleRejected) { }

    @Override
    public Integer call() throws Exception {
        PrintStream out = System.out;
        if (replicas < 2) {
            throw new CliException(ExitCodes.USAGE, "--replicas must be at least 2, was " + replicas);
        }
        if (payments < 1) {
            throw new CliException(ExitCodes.USAGE, "--payments must be at least 1, was " + payments);
        }
        long started = System.nanoTime();
        out.println("dlock demo: " + replicas + " replicas of a payment service process the same " + payments
                + " payments.");
        EmbeddedZooKeeper embedded = null;
        String backendUri = uri;
        List<LockClient> clients = new ArrayList<>();
        try {
            if (backendUri == null || backendUri.isBlank()) {
                if (lease.compareTo(Duration.ofSeconds(4)) > 0) {
                    throw new CliException(ExitCodes.USAGE, "--lease must be at most 4s on the embedded server "
                            + "(its sessions last at most 5s), was " + Durations.format(lease));
                }
                long t = System.nanoTime();
                embedded = EmbeddedZooKeeper.start(Duration.ofSeconds(30));
                Duration session = lease.plusSeconds(1);
                backendUri = embedded.uri(session);
                out.println("Backend: a ZooKeeper server embedded in this process, on " + embedded.connectString()
                        + " (started in " + Durations.format(Duration.ofNanos(System.nanoTime() - t)) + "), sessions of "
                        + Durations.format(session) + ".");
            }
            LockOptions options = Main.lockOptions(lease);
            for (int i = 0; i < replicas; i++) {
                clients.add(BackendOptions.open(backendUri, operationTimeout, options));
            }
            if (embedded == null) {
                out.println("Backend: " + BackendUri.redact(backendUri) + ".");
            }
            String prefix = "dlock-demo-" + Long.toHexString(System.nanoTime() & 0xffffff) + ":payment:";
            if (PostgresLedger.handles(backendUri)) {
                ledgerUri = backendUri;
                ledgerPrefix = prefix;
                try (Ledger probe = newLedger()) {
                    out.println("Ledger: the table " + ((PostgresLedger) probe).table() + " in that database, each "
                            + "fenced write checking and storing the token in one statement (fence <= token).");
                }
            }
            List<Outcome> outcomes = new ArrayList<>();
            try {
                outcomes.add(withoutLock(out));
                outcomes.add(withDlock(out, clients, prefix, options));
                outcomes.add(stalledReplica(out, clients, prefix));
            } catch (LockBackendException e) {
                throw BackendOptions.failure(backendUri, e);
            }
            return report(out, outcomes, started);
        } finally {
            for (LockClient c : clients) {
                c.close();
            }
            if (embedded != null) {
                embedded.close();
            }
        }
    }

    private List<String> orders() {
        List<String> orders = new ArrayList<>();
        for (int i = 1; i <= payments; i++) {
            orders.add(String.format(Locale.ROOT, "order-%03d", i));
        }
        return orders;
    }

    /** Phase 1: check-then-charge with no lock. */
    private Outcome withoutLock(PrintStream out) throws Exception {
        out.println();
        out.println("1. No lock: each replica checks the ledger, calls the payment provider (" + WORK_MILLIS
                + " ms), then records the charge.");
        try (Ledger ledger = newLedger()) {
            return withoutLock(out, ledger);
        }
    }

    private Outcome withoutLock(PrintStream out, Ledger ledger) throws Exception {
        List<String> orders = orders();
        runReplicas("no-lock", i -> {
            SplittableRandom jitter = new SplittableRandom(seed * 31 + i);
            for (String order : orders) {
                pause(jitter.nextInt(3)); // the replicas pick the payment up at slightly different moments
                if (!ledger.isCharged(order)) {
                    pause(WORK_MILLIS);
                    ledger.charge(order);
                }
            }
        });
        out.println("  " + ledger.charges() + " charges for " + payments + " orders: " + ledger.doubleCharges()
                + " double charges.");
        return new Outcome("1. no lock", payments, ledger.charges(), ledger.doubleCharges(), "-");
    }

    /** Phase 2: the same, each payment under its lock, with the token passed to the ledger. */
    private Outcome withDlock(PrintStream out, List<LockClient> clients, String prefix, LockOptions options)
            throws Exception {
        out.println();
        out.println("2. With dlock: the same, each payment under the lock payment:<order>, its fencing token passed "
                + "to the ledger.");
        try (Ledger ledger = newLedger()) {
            return withDlock(out, clients, prefix, options, ledger);
        }
    }

    private Outcome withDlock(PrintStream out, List<LockClient> clients, String prefix, LockOptions options,
                              Ledger ledger) throws Exception {
        List<String> orders = orders();
        Progress progress = new Progress(out, "payments processed", replicas * payments);
        runReplicas("dlock", i -> {
            SplittableRandom jitter = new SplittableRandom(seed * 31 + i);
            LockClient client = clients.get(i);
            for (String order : orders) {
                pause(jitter.nextInt(3));
                Optional<Lease> granted = client.lock(prefix + order, options).tryAcquire(Duration.ofSeconds(30));
                if (granted.isEmpty()) {
                    throw new IllegalStateException("replica-" + (i + 1) + " did not get the lock of " + order
                            + " within 30s");
                }
                try (Lease lease = granted.get()) {
                    if (!ledger.isCharged(order, lease.fencingToken())) {
                        pause(WORK_MILLIS);
                        ledger.charge(order, lease.fencingToken());
                    }
                }
                progress.step();
            }
        });
        out.println("  " + ledger.charges() + " charges for " + payments + " orders: " + ledger.doubleCharges()
                + " double charges.");
        return new Outcome("2. with dlock", payments, ledger.charges(), ledger.doubleCharges(),
                Integer.toString(ledger.staleRejected()));
    }

    /** Phase 3: a holder stalls past its lease; its late write is fenced off. */
    private Outcome stalledReplica(PrintStream out, List<LockClient> clients, String prefix) throws Exception {
        out.println();
        out.println("3. Stalled replica: replica-1 pauses longer than its " + Durations.format(lease)
                + " lease in the middle of a payment.");
        try (Ledger ledger = newLedger()) {
            return stalledReplica(out, clients, prefix, ledger);
        }
    }

    private Outcome stalledReplica(PrintStream out, List<LockClient> clients, String prefix, Ledger ledger)
            throws Exception {
        String order = "order-stalled";
        String name = prefix + order;
        long t0 = System.nanoTime();
        // no renewal: to the backend, a process frozen in a GC pause is a holder that stopped renewing
        LockOptions frozen = LockOptions.builder().leaseTime(lease).autoRenew(false).build();
        Lease first = clients.get(0).lock(name, frozen).tryAcquire(Duration.ofSeconds(30)).orElseThrow(
                () -> new IllegalStateException("replica-1 did not get the lock of " + order));
        long staleToken = first.fencingToken();
        ledger.isCharged(order, staleToken);
        say(out, t0, "replica-1 takes the lock (token " + staleToken + ") and checks: " + order + " is not charged yet");
        say(out, t0, "replica-1 calls the payment provider and freezes (GC pause); it stops renewing its lease");

        CountDownLatch secondDone = new CountDownLatch(1);
        AtomicReference<Throwable> secondFailed = new AtomicReference<>();
        Duration maxWait = lease.multipliedBy(4).plus(operationTimeout);
        Thread second = new Thread(() -> {
            try {
                say(out, t0, "replica-2 picks up " + order + " and waits for its lock");
                Lease lease2 = clients.get(1).lock(name).tryAcquire(maxWait).orElseThrow(
                        () -> new IllegalStateException("replica-2 did not get the lock within " + Durations.format(maxWait)));
                try (Lease l = lease2) {
                    long token = l.fencingToken();
                    say(out, t0, "replica-1's lease ran out; replica-2 takes the lock (token " + token + ")");
                    if (!ledger.isCharged(order, token)) {
                        pause(WORK_MILLIS);
                        ledger.charge(order, token);
                        say(out, t0, "replica-2 checks (not charged), charges " + order + " with token " + token
                                + ": accepted");
                    }
                }
            } catch (Throwable e) {
                secondFailed.set(e);
            } finally {
                secondDone.countDown();
            }
        }, "replica-2");
        second.setDaemon(true);
        second.start();
        // replica-1 stays frozen until replica-2 is done: a pause longer than the lease
        if (!secondDone.await(maxWait.plusSeconds(10).toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("replica-2 did not finish within " + Durations.format(maxWait.plusSeconds(10)));
        }
        if (secondFailed.get() != null) {
            Throwable e = secondFailed.get();
            if (e instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(e);
        }
        say(out, t0, "replica-1 wakes up, still sure it holds the lock, and charges " + order + " with token "
                + staleToken);
        boolean rejected;
        try {
            ledger.charge(order, staleToken);
            rejected = false;
            say(out, t0, "the ledger ACCEPTED the stale write: " + order + " is charged twice");
        } catch (Ledger.StaleToken e) {
            rejected = true;
            say(out, t0, "the ledger rejects it: token " + staleToken + " is lower than token " + e.highest
                    + ", already seen for " + order);
        }
        first.release(); // a no-op: the lease ended long ago
        out.println("  (Checking lease.isValid() before the write would not be enough: the pause can come right "
                + "after the check.)");
        return new Outcome("3. stalled replica", 1, ledger.charges(), ledger.doubleCharges(),
                Integer.toString(rejected ? 1 : 0));
    }

    /** A fresh ledger for one phase: a table's rows of its own, or one in memory. */
    private Ledger newLedger() {
        if (ledgerUri == null) {
            return new MemoryLedger();
        }
        try {
            return PostgresLedger.open(ledgerUri, ledgerPrefix);
        } catch (java.sql.SQLException e) {
            throw new CliException(ExitCodes.UNREACHABLE, "the demo's ledger table in " + BackendUri.redact(ledgerUri)
                    + " could not be opened: " + e.getMessage() + " [SQLSTATE " + e.getSQLState() + "]", e);
        }
    }

    private int report(PrintStream out, List<Outcome> outcomes, long started) {
        out.println();
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"phase", "payments", "charges", "double charges", "stale writes rejected"});
        for (Outcome o : outcomes) {
            rows.add(new String[] {o.phase(), Integer.toString(o.payments()), Integer.toString(o.charges()),
                Integer.toString(o.doubleCharges()), o.staleRejected()});
        }
        Table.print(out, rows);
        out.println();
        Outcome locked = outcomes.get(1);
        Outcome stalled = outcomes.get(2);
        boolean ok = locked.doubleCharges() == 0 && locked.charges() == payments
                && stalled.doubleCharges() == 0 && "1".equals(stalled.staleRejected());
        String took = Durations.format(Duration.ofNanos(System.nanoTime() - started));
        if (ok) {
            out.println("With dlock no order was charged twice, and the stalled replica's late write was rejected by "
                    + "its fencing token. (" + took + ")");
            return ExitCodes.OK;
        }
        out.println("FAILED: with dlock, " + locked.doubleCharges() + " double charges and " + locked.charges()
                + " charges for " + payments + " orders; stalled replica: " + stalled.doubleCharges()
                + " double charges, " + stalled.staleRejected() + " stale writes rejected. (" + took + ")");
        return ExitCodes.FAILED;
    }

    private static void say(PrintStream out, long t0, String what) {
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        synchronized (out) {
            out.printf(Locale.ROOT, "  %5.1fs  %s%n", ms / 1000.0, what);
        }
    }

    @FunctionalInterface
    private interface ReplicaBody {
        void run(int replica) throws Exception;
    }

    /** Runs one body per replica on its own thread, all starting together; rethrows the first failure. */
    private void runReplicas(String label, ReplicaBody body) throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        AtomicReference<Exception> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < replicas; i++) {
            int index = i;
            Thread t = new Thread(() -> {
                try {
                    go.await();
                    body.run(index);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    failure.compareAndSet(null, e);
                } catch (Exception e) {
                    failure.compareAndSet(null, e);
                }
            }, "replica-" + (i + 1) + "-" + label);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        if (failure.get() != null) {
            throw failure.get();
        }
    }

    private static void pause(long millis) throws InterruptedException {
        if (millis > 0) {
            Thread.sleep(millis);
        }
    }
}
