package io.dlock.dynamodb;

import io.dlock.tck.ProxiedFixture;
import io.dlock.tck.ServerControl;
import io.dlock.tck.TckFixture;
import java.net.InetSocketAddress;
import java.time.Duration;
import io.dlock.LockConfigurationException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The TCK fixture for DynamoDB: one DynamoDB Local process on a free loopback port, clients that
 * can be frozen through a TCP proxy (the endpoint in the URI's query points at the proxy), and
 * control of the server process.
 */
public final class DynamoDbFixture extends ProxiedFixture implements TckFixture {

    /** The table the TCK's clients use; the first client creates it. */
    static final String TABLE = "dlock_tck";

    private final DynamoDbLocal server;

    /** Starts DynamoDB Local for this fixture. */
    public DynamoDbFixture() {
        this.server = DynamoDbLocal.start();
    }

    @Override
    public String name() {
        return "dynamodb";
    }

    /**
     * A lease of 1 s: DynamoDB Local answers in a few milliseconds on loopback, so renewals every
     * 333 ms keep a lease comfortably, and the expiry rules stay quick.
     */
    @Override
    public Duration leaseTime() {
        return Duration.ofSeconds(1);
    }

    /**
     * 2 s: DynamoDB Local answers in a few milliseconds, but on a loaded 2-core machine (other
     * JVMs building and testing) an answer occasionally took over a second, which failed S6 once in
     * a repeated run with 1 s. Every TCK bound that involves the timeout grows with it.
     */
    @Override
    public Duration operationTimeout() {
        return Duration.ofSeconds(2);
    }

    @Override
    protected List<InetSocketAddress> endpoints() {
        return List.of(server.address());
    }

    @Override
    protected String uri(List<InetSocketAddress> endpoints) {
        return uri(TABLE, endpoints.get(0).getHostString() + ":" + endpoints.get(0).getPort()) + "&createTable=true";
    }

    /**
     * A URI for DynamoDB Local's test credentials.
     *
     * @param table the table
     * @param hostPort where the server (or a proxy) listens
     * @return the URI, without createTable
     */
    static String uri(String table, String hostPort) {
        return "dynamodb://" + table + "?region=" + DynamoDbLocal.REGION + "&endpoint=http://" + hostPort
                + "&accessKeyId=" + DynamoDbLocal.ACCESS_KEY + "&secretAccessKey=" + DynamoDbLocal.SECRET_KEY;
    }

    @Override
    public Optional<String> unreachableUri() {
        return Optional.of(uri(TABLE, DynamoDbLocal.HOST + ":" + DynamoDbLocal.freePort()));
    }

    /**
     * A table that does not exist, without createTable ({@code MISSING_RESOURCE}), and a
     * credentials profile that does not exist ({@code CREDENTIALS}; DynamoDB Local takes any
     * credentials it is given, so only their absence can fail).
     */
    @Override
    public Map<LockConfigurationException.Kind, String> misconfiguredUris() {
        String hostPort = DynamoDbLocal.HOST + ":" + server.address().getPort();
        return Map.of(LockConfigurationException.Kind.MISSING_RESOURCE, uri("dlock_tck_no_such_table", hostPort),
                LockConfigurationException.Kind.CREDENTIALS, "dynamodb://" + TABLE + "?region=" + DynamoDbLocal.REGION
                        + "&endpoint=http://" + hostPort + "&profile=dlock-tck-no-such-profile");
    }

    @Override
    public Optional<String> notApplicable(io.dlock.tck.Rule rule) {
        return rule == io.dlock.tck.Rule.S9
                ? Optional.of("DynamoDB replicates inside the service and has no leader failover a client can see or cause; "
                        + "DynamoDB Local is a single process")
                : Optional.empty();
    }

    @Override
    public Optional<ServerControl> server() {
        return Optional.of(new ServerControl() {
            @Override
            public void pause() {
                server.pause();
            }

            @Override
            public void resume() {
                server.resume();
            }

            @Override
            public void kill() {
                server.kill();
            }

            @Override
            public void restart() {
                server.restart();
            }
        });
    }

    @Override
    public void close() {
        server.close();
    }

    @Override
    public String toString() {
        return "DynamoDbFixture{" + server + "}";
    }
}
