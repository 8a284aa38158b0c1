package io.dlock.postgres;

import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockConfigurationException;
import io.dlock.tck.ProxiedFixture;
import io.dlock.tck.ServerControl;
import io.dlock.tck.TckFixture;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The TCK fixture for PostgreSQL: one real server on a free loopback port with SCRAM password
 * authentication, a database {@code dlock} owned by the role {@code dlock} (whose clients create
 * dlock's table on first use), clients that can be frozen through a TCP proxy, and control of the
 * server's processes. A kill and restart keeps the data (crash recovery), so locks and the token
 * sequence survive it, as on any PostgreSQL.
 *
 * <p>For rule V4 it also sets up a role {@code tck_limited} that may use two schemas but create
 * nothing: {@code tck_empty} (no table: {@code MISSING_RESOURCE}) and {@code tck_locked} (dlock's
 * table, made by the owner, without rights on it: {@code PERMISSION}).
 */
public final class PostgresFixture extends ProxiedFixture implements TckFixture {

    static final String USER = "dlock";
    static final String PASSWORD = "dlock-test-pw";
    static final String DATABASE = "dlock";
    static final String LIMITED_USER = "tck_limited";
    static final String LIMITED_PASSWORD = "tck-limited-pw";

    private final PostgresServer server;

    /** Starts the server and sets up the roles, database and schemas. */
    public PostgresFixture() {
        this.server = PostgresServer.start();
        try {
            setUp(server);
        } catch (RuntimeException | Error e) {
            server.close();
            throw e;
        }
    }

    /**
     * Creates the role {@code dlock} and its database, and the limited role with its two schemas.
     *
     * @param server a fresh server
     */
    static void setUp(PostgresServer server) {
        server.sql("postgres",
                "CREATE ROLE " + USER + " LOGIN PASSWORD '" + PASSWORD + "'",
                "CREATE ROLE " + LIMITED_USER + " LOGIN PASSWORD '" + LIMITED_PASSWORD + "'",
                "CREATE DATABASE " + DATABASE + " OWNER " + USER);
        server.sql(DATABASE,
                "CREATE SCHEMA tck_empty",
                "GRANT USAGE ON SCHEMA tck_empty TO " + LIMITED_USER,
                "CREATE SCHEMA tck_locked",
                "GRANT USAGE ON SCHEMA tck_locked TO " + LIMITED_USER);
        // dlock's own objects in tck_locked, made by a client of the superuser, with no rights granted
        try (LockClient c = LockClient.open(LockClientConfig.builder(
                server.uri(PostgresServer.SUPERUSER, PostgresServer.SUPERUSER_PASSWORD, DATABASE) + "?schema=tck_locked")
                .build())) {
            c.holder("tck-fixture-setup");
        }
    }

    /** @return the server */
    PostgresServer postgres() {
        return server;
    }

    @Override
    public String name() {
        return "postgres";
    }

    @Override
    protected List<InetSocketAddress> endpoints() {
        return List.of(server.address());
    }

    @Override
    protected String uri(List<InetSocketAddress> endpoints) {
        InetSocketAddress a = endpoints.get(0);
        return "postgresql://" + USER + ":" + PASSWORD + "@" + a.getHostString() + ":" + a.getPort() + "/" + DATABASE;
    }

    @Override
    public Optional<String> unreachableUri() {
        return Optional.of("postgresql://" + USER + ":" + PASSWORD + "@" + PostgresServer.HOST + ":"
                + io.dlock.tck.ServerProcesses.freeLoopbackPort() + "/" + DATABASE);
    }

    /**
     * A wrong password ({@code CREDENTIALS}); a role that may create nothing, in a schema without
     * dlock's table ({@code MISSING_RESOURCE}) and in one with the table but no rights on it
     * ({@code PERMISSION}); {@code sslmode=require} against this server, which has no TLS
     * ({@code TLS}).
     */
    @Override
    public Map<LockConfigurationException.Kind, String> misconfiguredUris() {
        return Map.of(
                LockConfigurationException.Kind.CREDENTIALS, server.uri(USER, "not-" + PASSWORD, DATABASE),
                LockConfigurationException.Kind.MISSING_RESOURCE,
                server.uri(LIMITED_USER, LIMITED_PASSWORD, DATABASE) + "?schema=tck_empty",
                LockConfigurationException.Kind.PERMISSION,
                server.uri(LIMITED_USER, LIMITED_PASSWORD, DATABASE) + "?schema=tck_locked",
                LockConfigurationException.Kind.TLS, server.uri(USER, PASSWORD, DATABASE) + "?sslmode=require");
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
        return "PostgresFixture{" + server + "}";
    }
}
