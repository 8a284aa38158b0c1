package io.dlock.bench.internal.peers;

import com.zaxxer.hikari.HikariDataSource;
import io.dlock.bench.internal.Contender;
import java.net.InetSocketAddress;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.UUID;

/**
 * The floor on PostgreSQL: the fewest statements a correct lock with a lease on the server's
 * clock needs, one per operation in autocommit. Acquire is {@code INSERT ... ON CONFLICT (name)
 * DO UPDATE ... WHERE expires_at <= now() RETURNING 1} (taken if absent or its lease ended),
 * retried after 1 ms while taken; release is {@code DELETE ... WHERE name = ? AND owner = ?}.
 * Table {@code raw_locks}. No renewal, no waiting, no token.
 */
public final class RawPostgresContender extends Floor implements Contender.OnOneServer {

    private static final String ACQUIRE = "INSERT INTO raw_locks (name, owner, expires_at)"
            + " VALUES (?, ?, now() + ? * interval '1 millisecond') ON CONFLICT (name) DO UPDATE"
            + " SET owner = excluded.owner, expires_at = excluded.expires_at WHERE raw_locks.expires_at <= now()"
            + " RETURNING 1";
    private static final String RELEASE = "DELETE FROM raw_locks WHERE name = ? AND owner = ?";

    @Override
    public String name() {
        return "raw JDBC (floor)";
    }

    @Override
    public Session connect(InetSocketAddress server, Duration lease) {
        HikariDataSource pool = PostgresPeers.pool(server, "raw-jdbc");
        return new Session() {
            @Override
            public Held acquire(String key) throws Exception {
                String owner = UUID.randomUUID().toString();
                while (!tryAcquire(key, owner)) {
                    Thread.sleep(1);
                }
                return () -> {
                    try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(RELEASE)) {
                        ps.setString(1, key);
                        ps.setString(2, owner);
                        ps.executeUpdate();
                    }
                };
            }

            private boolean tryAcquire(String key, String owner) throws Exception {
                try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(ACQUIRE)) {
                    ps.setString(1, key);
                    ps.setString(2, owner);
                    ps.setLong(3, lease.toMillis());
                    try (ResultSet rs = ps.executeQuery()) {
                        return rs.next();
                    }
                }
            }

            @Override
            public void close() {
                pool.close();
            }
        };
    }
}
