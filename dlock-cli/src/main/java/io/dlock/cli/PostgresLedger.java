package io.dlock.cli;

import io.dlock.spi.BackendUri;
import io.dlock.spi.support.UriReader;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The demo's ledger as a real PostgreSQL table, in the database (and schema) of the
 * {@code postgresql://} URI the demo runs on: {@code SCHEMA.dlock_demo_ledger}, one row per order
 * and run, with a fence column. A fenced read or write is one statement that checks the token and
 * stores it, {@code ... SET fence = :token WHERE ... AND fence <= :token} (docs/FENCING.md), so a
 * stalled holder's late write is refused by the database itself. One connection, used by one
 * statement at a time (the replicas' races are between their statements, as between processes).
 * The run's rows are deleted when it is closed.
 */
final class PostgresLedger implements Ledger {

    private static final AtomicInteger RUNS = new AtomicInteger();

    private final Connection db;
    private final String table;
    private final String run;
    private final AtomicInteger staleRejected = new AtomicInteger();

    private PostgresLedger(Connection db, String table, String run) {
        this.db = db;
        this.table = table;
        this.run = run;
    }

    /**
     * @param uri a URI
     * @return whether it names a PostgreSQL database
     */
    static boolean handles(String uri) {
        return uri != null && (uri.startsWith("postgresql://") || uri.startsWith("postgres://"));
    }

    /**
     * Connects to the URI's database and creates the table if it is missing.
     *
     * @param uri a {@code postgresql://} URI, as dlock-postgres reads it
     * @param prefix what this run's rows are marked with
     * @return the ledger
     * @throws SQLException if the database cannot be reached or the table cannot be made
     */
    static PostgresLedger open(String uri, String prefix) throws SQLException {
        BackendUri parsed = BackendUri.parse(uri);
        UriReader r = UriReader.of(parsed, "postgres", Set.of("schema", "sslmode", "sslrootcert", "poolSize"));
        BackendUri.HostPort hp = r.hosts(5432, 1, "postgresql://USER:PASSWORD@HOST:PORT/DATABASE").get(0);
        String database = parsed.path().startsWith("/") ? parsed.path().substring(1) : parsed.path();
        String schema = r.text("schema", "public");
        if (!schema.matches("[a-z_][a-z0-9_]{0,62}")) {
            throw r.invalid("parameter schema", "must be a lower-case PostgreSQL identifier, was '" + schema + "'");
        }
        Properties p = new Properties();
        r.credentials(false, "postgresql://USER:PASSWORD@HOST:PORT/DATABASE").ifPresent(c -> {
            p.setProperty("user", c.user());
            p.setProperty("password", c.password());
        });
        r.text("sslmode").ifPresent(v -> p.setProperty("sslmode", v));
        r.text("sslrootcert").ifPresent(v -> p.setProperty("sslrootcert", v));
        p.setProperty("ApplicationName", "dlock demo");
        String host = hp.host().indexOf(':') >= 0 ? "[" + hp.host() + "]" : hp.host();
        Connection db = DriverManager.getConnection("jdbc:postgresql://" + host + ":" + hp.portOr(5432) + "/"
                + URLEncoder.encode(database, StandardCharsets.UTF_8), p);
        String table = schema + ".dlock_demo_ledger";
        try (Statement s = db.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + table + " (run text NOT NULL, order_id text NOT NULL,"
                    + " charges int NOT NULL DEFAULT 0, fence bigint NOT NULL DEFAULT 0, PRIMARY KEY (run, order_id))");
        } catch (SQLException e) {
            db.close();
            throw e;
        }
        return new PostgresLedger(db, table, prefix + RUNS.incrementAndGet());
    }

    /** @return the table, for the demo's output */
    String table() {
        return table;
    }

    private synchronized void ensureRow(String order) throws SQLException {
        try (PreparedStatement ps = db.prepareStatement("INSERT INTO " + table + " (run, order_id) VALUES (?, ?)"
                + " ON CONFLICT DO NOTHING")) {
            ps.setString(1, run);
            ps.setString(2, order);
            ps.executeUpdate();
        }
    }

    @Override
    public synchronized boolean isCharged(String order) {
        try (PreparedStatement ps = db.prepareStatement("SELECT charges FROM " + table
                + " WHERE run = ? AND order_id = ?")) {
            ps.setString(1, run);
            ps.setString(2, order);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getInt(1) > 0;
            }
        } catch (SQLException e) {
            throw failed(e);
        }
    }

    @Override
    public synchronized void charge(String order) {
        try (PreparedStatement ps = db.prepareStatement("INSERT INTO " + table + " (run, order_id, charges)"
                + " VALUES (?, ?, 1) ON CONFLICT (run, order_id) DO UPDATE SET charges = " + table + ".charges + 1")) {
            ps.setString(1, run);
            ps.setString(2, order);
            ps.executeUpdate();
        } catch (SQLException e) {
            throw failed(e);
        }
    }

    @Override
    public synchronized boolean isCharged(String order, long token) {
        try {
            ensureRow(order);
            // a fenced read: the token is checked and stored in the same statement
            try (PreparedStatement ps = db.prepareStatement("UPDATE " + table + " SET fence = ?"
                    + " WHERE run = ? AND order_id = ? AND fence <= ? RETURNING charges")) {
                ps.setLong(1, token);
                ps.setString(2, run);
                ps.setString(3, order);
                ps.setLong(4, token);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        return rs.getInt(1) > 0;
                    }
                }
            }
            throw stale(order, token);
        } catch (SQLException e) {
            throw failed(e);
        }
    }

    @Override
    public synchronized void charge(String order, long token) {
        try {
            ensureRow(order);
            try (PreparedStatement ps = db.prepareStatement("UPDATE " + table + " SET charges = charges + 1, fence = ?"
                    + " WHERE run = ? AND order_id = ? AND fence <= ?")) {
                ps.setLong(1, token);
                ps.setString(2, run);
                ps.setString(3, order);
                ps.setLong(4, token);
                if (ps.executeUpdate() == 1) {
                    return;
                }
            }
            throw stale(order, token);
        } catch (SQLException e) {
            throw failed(e);
        }
    }

    private StaleToken stale(String order, long token) throws SQLException {
        staleRejected.incrementAndGet();
        try (PreparedStatement ps = db.prepareStatement("SELECT fence FROM " + table + " WHERE run = ? AND order_id = ?")) {
            ps.setString(1, run);
            ps.setString(2, order);
            try (ResultSet rs = ps.executeQuery()) {
                return new StaleToken(order, token, rs.next() ? rs.getLong(1) : -1);
            }
        }
    }

    @Override
    public synchronized int charges() {
        return sum("sum(charges)");
    }

    @Override
    public synchronized int doubleCharges() {
        return sum("sum(greatest(0, charges - 1))");
    }

    @Override
    public int staleRejected() {
        return staleRejected.get();
    }

    private int sum(String what) {
        try (PreparedStatement ps = db.prepareStatement("SELECT coalesce(" + what + ", 0) FROM " + table
                + " WHERE run = ?")) {
            ps.setString(1, run);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        } catch (SQLException e) {
            throw failed(e);
        }
    }

    private IllegalStateException failed(SQLException e) {
        return new IllegalStateException("the ledger table " + table + " failed: " + e.getMessage()
                + " [SQLSTATE " + e.getSQLState() + "]", e);
    }

    /** Deletes the run's rows and closes the connection. */
    @Override
    public synchronized void close() {
        try (Connection c = db; PreparedStatement ps = c.prepareStatement("DELETE FROM " + table + " WHERE run = ?")) {
            ps.setString(1, run);
            ps.executeUpdate();
        } catch (SQLException e) {
            // the demo's figures are printed already; its rows stay, marked with the run
        }
    }
}
