package io.dlock.tck.mem;

import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.tck.FreezableClient;
import io.dlock.tck.ServerControl;
import io.dlock.tck.TckFixture;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

/** The TCK fixture of the reference provider: a fresh {@link MemServer} per fixture. */
public class MemFixture implements TckFixture {

    private static final AtomicInteger IDS = new AtomicInteger();

    private final String server = "tck-" + IDS.incrementAndGet();
    private final String scheme;

    /** Creates a fixture with its own server. */
    public MemFixture() {
        this("mem");
    }

    /**
     * Creates a fixture with its own server, opened through another scheme (for providers that
     * wrap the reference provider).
     *
     * @param scheme the URI scheme of the provider under test
     */
    protected MemFixture(String scheme) {
        this.scheme = scheme;
    }

    @Override
    public String name() {
        return scheme;
    }

    /** @return the URI of this fixture's server */
    protected String uri() {
        return scheme + "://" + server;
    }

    @Override
    public LockClientConfig.Builder clientConfig() {
        return LockClientConfig.builder(uri());
    }

    @Override
    public Duration leaseTime() {
        return Duration.ofMillis(600);
    }

    @Override
    public Duration operationTimeout() {
        return Duration.ofMillis(500);
    }

    @Override
    public Optional<FreezableClient> openFreezable(LockClientConfig.Builder config) {
        String linkId = UUID.randomUUID().toString();
        LockClient client = LockClient.open(config.uri(uri() + "?link=" + linkId).build());
        MemLink link = MemServer.named(server).link(linkId).orElseThrow();
        return Optional.of(new FreezableClient() {
            @Override
            public LockClient client() {
                return client;
            }

            @Override
            public void freeze() {
                link.freeze();
            }

            @Override
            public void unfreeze() {
                link.unfreeze();
            }

            @Override
            public void close() {
                link.unfreeze();
                client.close();
            }
        });
    }

    @Override
    public Optional<ServerControl> server() {
        MemServer s = MemServer.named(server);
        return Optional.of(new ServerControl() {
            @Override
            public void pause() {
                s.pause();
            }

            @Override
            public void resume() {
                s.resume();
            }

            @Override
            public void kill() {
                s.kill();
            }

            @Override
            public void restart() {
                s.resume();
            }

            @Override
            public boolean restartLosesLocks() {
                return true;
            }
        });
    }

    @Override
    public void close() {
        MemServer.drop(server);
    }
}
