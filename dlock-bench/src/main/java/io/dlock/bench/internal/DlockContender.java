package io.dlock.bench.internal;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.function.Function;

/** dlock itself, through its public API, on the backend its URI names. */
public final class DlockContender implements Contender {

    private final String name;
    private final Function<Deployment, String> uri;

    /**
     * @param name the name in reports
     * @param uri the URI for a deployment (a single server's address may be a counting proxy's)
     */
    public DlockContender(String name, Function<Deployment, String> uri) {
        this.name = name;
        this.uri = uri;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Session connect(Deployment deployment, Duration lease) {
        LockClient client = LockClient.open(LockClientConfig.builder(uri.apply(deployment))
                .defaultLockOptions(LockOptions.builder().leaseTime(lease).build())
                .build());
        return new Session() {
            @Override
            public Held acquire(String key) throws InterruptedException {
                Lease l = client.lock(key).acquire();
                return () -> {
                    boolean valid = l.isValid();
                    l.release();
                    if (!valid) {
                        throw new IllegalStateException("the lease of " + key + " was lost before its release");
                    }
                };
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }
}
