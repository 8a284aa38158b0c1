package io.dlock.bench.internal.peers;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dlock.postgres.PostgresServer;
import java.net.InetSocketAddress;

/** What the PostgreSQL peers share: a connection pool to the benchmark's server, as the superuser. */
final class PostgresPeers {

    /** Connections per client: enough for the 16-thread throughput workload, as dlock's poolSize. */
    static final int POOL_SIZE = 16;

    private PostgresPeers() { }

    /**
     * @param server the server (or the counting proxy in front of it)
     * @param name the pool's name, for its threads
     * @return a HikariCP pool of {@link #POOL_SIZE} connections to the database {@code postgres}
     */
    static HikariDataSource pool(InetSocketAddress server, String name) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl("jdbc:postgresql://" + server.getHostString() + ":" + server.getPort() + "/postgres");
        c.setUsername(PostgresServer.SUPERUSER);
        c.setPassword(PostgresServer.SUPERUSER_PASSWORD);
        c.setMaximumPoolSize(POOL_SIZE);
        c.setMinimumIdle(1);
        c.setPoolName(name);
        return new HikariDataSource(c);
    }
}
