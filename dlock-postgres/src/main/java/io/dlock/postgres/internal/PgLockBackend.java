package io.dlock.postgres.internal;

import io.dlock.Capability;
import io.dlock.LockBackendException;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.LockHolder;
import io.dlock.spi.AcquireAttempt;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.Grant;
import io.dlock.spi.LockBackend;
import io.dlock.spi.ReleaseOutcome;
import io.dlock.spi.RenewOutcome;
import io.dlock.spi.support.LeaseTimes;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The PostgreSQL {@link LockBackend}: one row per held lock in {@code SCHEMA.dlock_locks}, tokens
 * from the sequence {@code SCHEMA.dlock_fence}, leases on the server's clock, and release notices
 * by {@code LISTEN/NOTIFY}. Public only so that {@code io.dlock.postgres.PostgresLockProvider} can
 * open it; not an API.
 *
 * <p>Connections: at most {@code poolSize} (default 4) for operations, plus one for LISTEN once a
 * waiter has waited. Every call ends within the operation timeout ({@link PgConnections#call}).
 * Thread-safe.
 */
public final class PgLockBackend implements LockBackend<Void> {

    private static final Logger LOG = LoggerFactory.getLogger(PgLockBackend.class);

    private static final Set<Capability> CAPABILITIES = Collections.unmodifiableSet(
            EnumSet.of(Capability.FENCING, Capability.NOTIFY_WAITERS, Capability.HOLDER_QUERY));

    /** The most grants one renewal statement carries; longer lists take several. */
    static final int RENEW_BATCH = 1000;

    private final PgSettings settings;
    private final PgSql sql;
    private final PgConnections connections;
    private final PgNotifications notifications;
    private final Duration timeout;
    private final Duration abandonBudget;
    /**
     * How long a waiter's place next in line lasts without a new try: the core tries again at
     * least every retry cap, and each try may take an operation timeout to arrive.
     */
    private final long ticketMillis;
    private final ReentrantLock setupLock = new ReentrantLock();
    private volatile boolean ready;

    private PgLockBackend(BackendContext context, PgSettings settings, PgConnections.Opener opener, boolean own) {
        this.settings = settings;
        this.sql = new PgSql(settings.schema);
        this.timeout = context.operationTimeout();
        this.abandonBudget = LeaseTimes.abandonBudget(timeout, Duration.ofMillis(50));
        this.ticketMillis = LeaseTimes.ceilMillis(context.config().retryCap().multipliedBy(2).plus(timeout));
        this.connections = new PgConnections(opener, own, settings.poolSize, settings, context.threadFactory());
        this.notifications = new PgNotifications(connections, settings.schema, timeout, context.threadFactory());
    }

    /**
     * Opens a backend for one client; no I/O.
     *
     * @param context the client's URI, timeouts and thread factory
     * @param dataSource the application's connections, or null to connect with the URI's settings
     * @return the backend
     * @throws IllegalArgumentException if the URI is not valid, naming the part
     */
    public static PgLockBackend open(BackendContext context, DataSource dataSource) {
        if (dataSource != null) {
            PgSettings settings = PgSettings.forDataSource(context.uri());
            return new PgLockBackend(context, settings, () -> borrow(dataSource), false);
        }
        PgSettings settings = PgSettings.fromUri(context.uri());
        String url = url(settings);
        Properties props = properties(settings, context.operationTimeout());
        org.postgresql.Driver driver = new org.postgresql.Driver();
        return new PgLockBackend(context, settings, () -> {
            Connection c = driver.connect(url, props);
            if (c == null) {
                throw new SQLException("the PostgreSQL driver did not accept the url", "08001");
            }
            return c;
        }, true);
    }

    private static Connection borrow(DataSource dataSource) throws SQLException {
        Connection c = dataSource.getConnection();
        if (c == null) {
            throw new SQLException("the DataSource gave no connection", "08001");
        }
        try {
            if (!c.getAutoCommit()) {
                // every statement of dlock's is its own transaction; the pool resets the mode on return
                c.rollback();
                c.setAutoCommit(true);
            }
        } catch (SQLException e) {
            c.close();
            throw e;
        }
        return c;
    }

    static String url(PgSettings s) {
        String host = s.host.indexOf(':') >= 0 ? "[" + s.host + "]" : s.host;
        return "jdbc:postgresql://" + host + ":" + s.port + "/" + URLEncoder.encode(s.database, StandardCharsets.UTF_8);
    }

    static Properties properties(PgSettings s, Duration timeout) {
        Properties p = new Properties();
        p.setProperty("user", s.user != null ? s.user : System.getProperty("user.name", "postgres"));
        if (s.password != null) {
            p.setProperty("password", s.password);
        }
        p.setProperty("sslmode", s.sslMode);
        if (s.sslRootCert != null) {
            p.setProperty("sslrootcert", s.sslRootCert.toString());
        }
        p.setProperty("ApplicationName", "dlock");
        // the statements need 9.5; saying so spares the set-up queries of older servers
        p.setProperty("assumeMinServerVersion", "9.5");
        long seconds = Math.max(1, TimeUnit.MILLISECONDS.toSeconds(timeout.toMillis() + 999));
        // whole seconds: backstops only; PgConnections keeps the exact deadline
        p.setProperty("connectTimeout", Long.toString(Math.min(Integer.MAX_VALUE, seconds)));
        p.setProperty("socketTimeout", Long.toString(Math.min(Integer.MAX_VALUE, seconds * 2 + 1)));
        p.setProperty("sslResponseTimeout", Long.toString(Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()))));
        p.setProperty("tcpKeepAlive", "true");
        return p;
    }

    PgNotifications notifications() {
        return notifications;
    }

    PgConnections connections() {
        return connections;
    }

    /** @return {@code FENCING}, {@code NOTIFY_WAITERS} and {@code HOLDER_QUERY} */
    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    /** @return 10 ms: the server keeps expiry to the microsecond; the rest is the core's margin */
    @Override
    public Duration minimumLeaseTime() {
        return Duration.ofMillis(10);
    }

    @Override
    public AcquireAttempt<Void> newAttempt(AcquireRequest request) {
        return new PgAttempt(this, request);
    }

    /**
     * Checks, once per client, that the server can serve dlock, and creates the schema, table and
     * sequence if they are missing and the role may (else {@code MISSING_RESOURCE}).
     */
    private void ensureReady(String lockName, long deadline) {
        if (ready) {
            return;
        }
        try {
            if (!setupLock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                throw new LockBackendException("the first use of " + settings.server() + " (checking dlock's table) "
                        + "did not finish within the operation timeout", lockName, null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("interrupted while checking dlock's table on " + settings.server(), lockName, e);
        }
        try {
            if (!ready) {
                connections.call("check of dlock's table", lockName, deadline, this::setUp);
                ready = true;
            }
        } finally {
            setupLock.unlock();
        }
    }

    private Void setUp(Connection c) throws SQLException {
        boolean schema;
        boolean table;
        boolean sequence;
        String role;
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql.setup)) {
            rs.next();
            String encoding = rs.getString(1);
            String synchronousCommit = rs.getString(2);
            schema = rs.getBoolean(3);
            table = rs.getBoolean(4);
            sequence = rs.getBoolean(5);
            int version = rs.getInt(6);
            role = rs.getString(7);
            if (version < 90500) {
                throw incompatible("is PostgreSQL " + version + "; dlock needs 9.5 or later (INSERT ... ON CONFLICT)");
            }
            if (!"UTF8".equalsIgnoreCase(encoding)) {
                throw incompatible("has the encoding " + encoding + "; dlock needs UTF8, so that every lock name can "
                        + "be stored as it is");
            }
            if ("off".equalsIgnoreCase(synchronousCommit)) {
                throw incompatible("runs with synchronous_commit = off for this role: a server crash could then lose "
                        + "a grant after its fencing token was handed out, and hand the token out again; set it to on "
                        + "for dlock's role (ALTER ROLE ... SET synchronous_commit = on)");
            }
        }
        if (schema && table && sequence) {
            return null;
        }
        if (table && !sequence) {
            // the sequence is created first, so this is not another client's creation under way
            throw new LockConfigurationException(Kind.MISSING_RESOURCE, "the sequence " + sql.sequence + " on "
                    + settings.server() + " is missing while its table " + sql.table + " exists: it was dropped, and a "
                    + "new one starting at 1 would hand out fencing tokens again that were handed out before; create "
                    + "it as io/dlock/postgres/postgres-schema.sql does, with START WITH a value above every token "
                    + "issued", null, null);
        }
        // the sequence before the table: a table without its sequence then always means a dropped one
        List<String> creates = new ArrayList<>();
        if (!schema) {
            creates.add(sql.createSchema);
        }
        if (!sequence) {
            creates.add(sql.createSequence);
        }
        if (!table) {
            creates.add(sql.createTable);
        }
        for (String create : creates) {
            try (Statement s = c.createStatement()) {
                s.execute(create);
            } catch (SQLException e) {
                if ("42501".equals(e.getSQLState())) {
                    throw new LockConfigurationException(Kind.MISSING_RESOURCE, "dlock's table " + sql.table
                            + " does not exist on " + settings.server() + ", and the role '" + role + "' may not create "
                            + (schema ? "it" : "the schema " + settings.schema)
                            + ": run io/dlock/postgres/postgres-schema.sql (in the dlock-postgres jar) as the schema's owner,"
                            + " with the schema " + settings.schema + ", or grant CREATE on the schema", null, e);
                }
                // another client created it at the same moment (a unique violation in the catalog, or
                // "already exists"): it exists now, committed, so the next one can follow
                if (!"42P07".equals(e.getSQLState()) && !"23505".equals(e.getSQLState())
                        && !"42710".equals(e.getSQLState()) && !"42P06".equals(e.getSQLState())) {
                    throw e;
                }
            }
        }
        LOG.info("dlock: created what was missing of {} and {} on {}", sql.table, sql.sequence, settings.server());
        return null;
    }

    private LockConfigurationException incompatible(String problem) {
        return new LockConfigurationException(Kind.INCOMPATIBLE_SERVER, settings.server() + " " + problem, null, null);
    }

    /**
     * What one acquire statement answered.
     *
     * @param result a grant with its token, or busy with the holder's remaining lease as the hint
     * @param serverMicros the server's time of the statement, in microseconds since the epoch
     * @param ticketed whether this attempt holds the ticket (the place next in line) now
     */
    record Tried(AttemptResult<Void> result, long serverMicros, boolean ticketed) {
    }

    /**
     * One acquire statement.
     *
     * @param request the name, owner and lease
     * @param queue whether to take the ticket if the lock is busy (tries after an attempt's first)
     * @param since the server's time of the attempt's first busy answer (microseconds), or -1
     * @return the answer
     */
    Tried acquire(AcquireRequest request, boolean queue, long since) {
        String name = request.name();
        long deadline = PgConnections.deadline(timeout);
        ensureReady(name, deadline);
        long leaseMillis = LeaseTimes.ceilMillis(request.leaseTime());
        return connections.call("acquire of lock '" + name + "'", name, deadline, c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.acquire.sql())) {
                int[] params = sql.acquire.params();
                for (int i = 0; i < params.length; i++) {
                    switch (params[i]) {
                        case 1 -> ps.setString(i + 1, name);
                        case 2 -> ps.setString(i + 1, request.ownerId());
                        case 3 -> ps.setLong(i + 1, leaseMillis);
                        case 4 -> ps.setBoolean(i + 1, queue && since > 0);
                        case 5 -> {
                            if (since > 0) {
                                ps.setLong(i + 1, since);
                            } else {
                                ps.setNull(i + 1, java.sql.Types.BIGINT);
                            }
                        }
                        case 6 -> ps.setLong(i + 1, ticketMillis);
                        default -> throw new IllegalStateException("parameter $" + params[i]);
                    }
                }
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        // taken by a grant committed after this statement's snapshot
                        return new Tried(AttemptResult.busy(), -1, false);
                    }
                    boolean granted = rs.getBoolean(1);
                    long serverMicros = rs.getLong(5);
                    if (granted) {
                        long token = rs.getLong(2);
                        if (token <= 0) {
                            throw new LockConfigurationException(Kind.INCOMPATIBLE_SERVER, "the sequence " + sql.sequence
                                    + " on " + settings.server() + " gave the token " + token + ": it must start at 1",
                                    name, null);
                        }
                        return new Tried(AttemptResult.granted(token, null), serverMicros, false);
                    }
                    long left = rs.getLong(3);
                    boolean ticketed = rs.getBoolean(4);
                    return new Tried(left > 0 ? AttemptResult.busy(Duration.ofMillis(left)) : AttemptResult.busy(),
                            serverMicros, ticketed);
                }
            }
        });
    }

    /**
     * Undoes what an attempt may have left: the row if this attempt's owner holds it (a grant whose
     * answer was lost; its lease is ended instead when someone waits next in line), and its place
     * next in line. One try within a quarter of the operation timeout; if that fails too, the row's
     * lease and the place's life end them. Never throws.
     */
    void abandon(AcquireRequest request) {
        String name = request.name();
        try {
            connections.call("clean-up after a failed acquire of lock '" + name + "'", name,
                    PgConnections.deadline(abandonBudget), c -> {
                        try (PreparedStatement ps = c.prepareStatement(sql.abandon.sql())) {
                            bind(ps, sql.abandon, name, request.ownerId());
                            ps.executeQuery().close();
                        }
                        return null;
                    });
        } catch (LockBackendException e) {
            LOG.debug("dlock: could not undo a possible grant of lock '{}'; it ends by its lease", name, e);
        } catch (RuntimeException e) {
            LOG.debug("dlock: undoing a possible grant of lock '{}' failed; it ends by its lease", name, e);
        }
    }

    /**
     * Renews leases, up to {@value #RENEW_BATCH} per statement; a statement that fails makes only
     * its own grants' outcomes unknown.
     *
     * @param grants the grants
     * @return per grant, in order: renewed, not held, or unknown
     */
    @Override
    public List<RenewOutcome> renew(List<Grant<Void>> grants) {
        List<RenewOutcome> out = new ArrayList<>(grants.size());
        for (int from = 0; from < grants.size(); from += RENEW_BATCH) {
            List<Grant<Void>> batch = grants.subList(from, Math.min(grants.size(), from + RENEW_BATCH));
            try {
                Set<String> renewed = renewBatch(batch);
                for (Grant<Void> g : batch) {
                    out.add(renewed.contains(g.ownerId()) ? RenewOutcome.renewed() : RenewOutcome.notHeld());
                }
            } catch (LockBackendException e) {
                RenewOutcome unknown = RenewOutcome.unknown(e);
                for (int i = 0; i < batch.size(); i++) {
                    out.add(unknown);
                }
            }
        }
        return out;
    }

    private Set<String> renewBatch(List<Grant<Void>> batch) {
        String lockName = batch.size() == 1 ? batch.get(0).name() : null;
        String what = batch.size() == 1 ? "renewal of lock '" + lockName + "'" : "renewal of " + batch.size() + " leases";
        long deadline = PgConnections.deadline(timeout);
        ensureReady(lockName, deadline);
        String[] names = new String[batch.size()];
        String[] owners = new String[batch.size()];
        Long[] tokens = new Long[batch.size()];
        Long[] leases = new Long[batch.size()];
        for (int i = 0; i < batch.size(); i++) {
            Grant<Void> g = batch.get(i);
            names[i] = g.name();
            owners[i] = g.ownerId();
            tokens[i] = g.fencingToken();
            leases[i] = LeaseTimes.ceilMillis(g.leaseTime());
        }
        return connections.call(what, lockName, deadline, c -> {
            Array n = c.createArrayOf("text", names);
            Array o = c.createArrayOf("text", owners);
            Array t = c.createArrayOf("int8", tokens);
            Array l = c.createArrayOf("int8", leases);
            try (PreparedStatement ps = c.prepareStatement(sql.renew.sql())) {
                bind(ps, sql.renew, n, o, t, l);
                Set<String> renewed = new HashSet<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        renewed.add(rs.getString(1));
                    }
                }
                return renewed;
            }
        });
    }

    /**
     * Releases a lease if its owner and token still hold the row, and sends the release notice in
     * the same transaction.
     *
     * @param grant the grant
     * @return released, or not held (also when the row was there but its lease had ended: it stays
     *     until a grant takes it over)
     * @throws LockBackendException if the outcome is unknown
     */
    @Override
    public ReleaseOutcome release(Grant<Void> grant) {
        String name = grant.name();
        long deadline = PgConnections.deadline(timeout);
        ensureReady(name, deadline);
        return connections.call("release of lock '" + name + "'", name, deadline, c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.release.sql())) {
                bind(ps, sql.release, name, grant.ownerId(), grant.fencingToken());
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? ReleaseOutcome.RELEASED : ReleaseOutcome.NOT_HELD;
                }
            }
        });
    }

    /**
     * Tells who holds a lock: the row's owner and token, and its lease left on the server's clock.
     *
     * @param name the lock
     * @return the holder, or empty if the lock is free or its lease ended
     * @throws LockBackendException if the server fails or does not answer in time
     */
    @Override
    public Optional<LockHolder> holder(String name) {
        long deadline = PgConnections.deadline(timeout);
        ensureReady(name, deadline);
        return connections.call("holder query of lock '" + name + "'", name, deadline, c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.holder.sql())) {
                bind(ps, sql.holder, name);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return Optional.empty();
                    }
                    return Optional.of(new LockHolder(name, rs.getString(1), rs.getLong(2), Duration.ofMillis(rs.getLong(3))));
                }
            }
        });
    }

    /** Binds {@code values[n-1]} to each {@code ?} that stands for {@code $n}. */
    private static void bind(PreparedStatement ps, PgSql.Jdbc statement, Object... values) throws SQLException {
        int[] params = statement.params();
        for (int i = 0; i < params.length; i++) {
            Object v = values[params[i] - 1];
            if (v instanceof String s) {
                ps.setString(i + 1, s);
            } else if (v instanceof Long l) {
                ps.setLong(i + 1, l);
            } else {
                ps.setArray(i + 1, (Array) v);
            }
        }
    }

    /** Stops the LISTEN thread and closes every connection. Never throws. */
    @Override
    public void close() {
        try {
            notifications.close();
        } finally {
            connections.close();
        }
    }

    @Override
    public String toString() {
        return "PgLockBackend{" + settings + "}";
    }
}
