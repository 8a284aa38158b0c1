package io.dlock.cli;

import io.dlock.Capability;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockHolder;
import io.dlock.LockOptions;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/** {@code dlock status}: who holds some locks. */
@Command(name = "status", sortOptions = false, mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
        header = "Show who holds locks.",
        description = {
            "Asks the backend, for each NAME, who holds it: the holder's owner id (random per grant), its fencing "
                    + "token, and the lease time it has left on the server where the backend can tell. "
                    + "A snapshot: it may be stale by the time it is printed. An election's leader is the holder of "
                    + "the lock named after the election, and its term is the token.",
            ""},
        footer = {"", "Example:", "  dlock status --uri redis://127.0.0.1:6379 payment:order-42 billing-scheduler"})
final class StatusCommand implements Callable<Integer> {

    @Mixin
    private BackendOptions backend;

    @Parameters(arity = "1..*", paramLabel = "NAME", description = "The locks (or elections) to show.")
    private List<String> names;

    @Override
    public Integer call() {
        PrintStream out = System.out;
        LockClient client = backend.open(LockOptions.defaults());
        boolean failed = false;
        try {
            if (!client.capabilities().contains(Capability.HOLDER_QUERY)) {
                throw new CliException(ExitCodes.USAGE, "the backend at " + backend.redactedUri()
                        + " cannot tell who holds a lock (it does not declare HOLDER_QUERY)");
            }
            List<String[]> rows = new ArrayList<>();
            rows.add(new String[] {"NAME", "STATE", "TOKEN", "REMAINING", "HOLDER (owner id)"});
            for (String name : names) {
                Optional<LockHolder> holder;
                try {
                    holder = client.holder(name);
                } catch (LockBackendException e) {
                    failed = true;
                    throw BackendOptions.failure(backend.uri(), e);
                }
                rows.add(holder.map(h -> new String[] {name, "held", Long.toString(h.fencingToken()),
                        h.remaining().map(Durations::format).orElse("unknown"), h.ownerId()})
                        .orElseGet(() -> new String[] {name, "free", "-", "-", "-"}));
            }
            Table.print(out, rows);
        } finally {
            if (failed) {
                BackendOptions.closeBriefly(client, BackendOptions.CLOSE_AFTER_FAILURE);
            } else {
                client.close();
            }
        }
        return ExitCodes.OK;
    }
}
