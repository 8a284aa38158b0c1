package io.dlock.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A client on an application's {@code DataSource}: it borrows at most {@code poolSize} connections
 * for operations plus one for LISTEN, gives every one back, and works on connections the pool hands
 * out with autocommit off.
 */
class PostgresDataSourceTest {

    private static PostgresServer server;

    @BeforeAll
    static void start() {
        server = PostgresServer.start();
        PostgresFixture.setUp(server);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** Counts the connections borrowed and not yet given back, and the most at once. */
    static final class CountingDataSource implements DataSource {
        final AtomicInteger borrowed = new AtomicInteger();
        final AtomicInteger most = new AtomicInteger();
        final AtomicInteger total = new AtomicInteger();
        /** The longest a connection stayed borrowed, in ms: the LISTEN connection's whole life. */
        final java.util.concurrent.atomic.AtomicLong longestHoldMs = new java.util.concurrent.atomic.AtomicLong();
        final boolean autoCommit;

        CountingDataSource(boolean autoCommit) {
            this.autoCommit = autoCommit;
        }

        @Override
        public Connection getConnection() throws SQLException {
            Connection c = DriverManager.getConnection("jdbc:postgresql://" + PostgresServer.HOST + ":" + server.port()
                    + "/" + PostgresFixture.DATABASE, PostgresFixture.USER, PostgresFixture.PASSWORD);
            c.setAutoCommit(autoCommit);
            most.accumulateAndGet(borrowed.incrementAndGet(), Math::max);
            total.incrementAndGet();
            AtomicBoolean returned = new AtomicBoolean();
            long borrowedAt = System.nanoTime();
            return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                    (proxy, method, args) -> {
                        if (method.getName().equals("close") && returned.compareAndSet(false, true)) {
                            borrowed.decrementAndGet();
                            longestHoldMs.accumulateAndGet(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - borrowedAt),
                                    Math::max);
                        }
                        try {
                            return method.invoke(c, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }

        @Override
        public Connection getConnection(String username, String password) {
            throw new UnsupportedOperationException();
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {
        }

        @Override
        public void setLoginTimeout(int seconds) {
        }

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public Logger getParentLogger() {
            return Logger.getGlobal();
        }

        @Override
        public <T> T unwrap(Class<T> iface) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }
    }

    /**
     * Two clients, each on its own pool with {@code poolSize=2} and six threads, contend for three
     * locks: the clients wait for each other's locks on the server (so each takes a LISTEN
     * connection, seen as one connection borrowed for most of the run), every grant is exclusive,
     * and neither client ever holds more than 2 + 1 of its pool's connections; after close, none.
     */
    @Test
    void aClientHoldsAtMostPoolSizePlusOneConnections() throws Exception {
        int poolSize = 2;
        List<CountingDataSource> pools = List.of(new CountingDataSource(true), new CountingDataSource(true));
        AtomicInteger[] holders = {new AtomicInteger(), new AtomicInteger(), new AtomicInteger()};
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger grants = new AtomicInteger();
        List<LockClient> clients = new ArrayList<>();
        for (CountingDataSource ds : pools) {
            clients.add(LockClient.open(LockClientConfig.builder("postgresql://?poolSize=" + poolSize + "&schema=ds")
                    .defaultLockOptions(LockOptions.builder().leaseTime(Duration.ofSeconds(5)).build()).build(),
                    PostgresLockProvider.withDataSource(ds)));
        }
        ExecutorService pool = Executors.newFixedThreadPool(12);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 12; t++) {
                int me = t;
                LockClient client = clients.get(t % 2);
                done.add(pool.submit(() -> {
                    for (int i = 0; i < 15; i++) {
                        int n = (me / 2 + i) % holders.length;
                        // generous: 12 threads share 3 locks on a loaded machine
                        Optional<Lease> lease = client.lock("ds-" + n).tryAcquire(Duration.ofSeconds(30));
                        try (Lease l = lease.orElseThrow()) {
                            if (holders[n].incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            grants.incrementAndGet();
                            Thread.sleep(2);
                            holders[n].decrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
            clients.forEach(LockClient::close);
        }
        for (CountingDataSource ds : pools) {
            System.out.println("[postgres] DataSource: at most " + ds.most.get() + " connections borrowed at once, "
                    + ds.total.get() + " borrows, the longest for " + ds.longestHoldMs.get() + " ms");
        }
        assertEquals(12 * 15, grants.get());
        assertEquals(0, overlaps.get());
        for (CountingDataSource ds : pools) {
            assertTrue(ds.most.get() <= poolSize + 1, "borrowed " + ds.most.get() + " at once, more than poolSize + 1");
            // an operation holds its connection for one statement; only the LISTEN connection is kept
            assertTrue(ds.longestHoldMs.get() >= 500, "no LISTEN connection was taken: the clients never waited on "
                    + "the server (longest hold " + ds.longestHoldMs.get() + " ms)");
            assertEquals(0, ds.borrowed.get(), "connections still borrowed after close");
        }
    }

    /**
     * Eight threads query eight different locks at once through one client with {@code poolSize=2}:
     * every query needs the server, nothing waits for a lock, and still at most two connections are
     * borrowed at a time (the others wait for a free one, within the operation timeout).
     */
    @Test
    void theBoundHoldsWhenMoreOperationsRunAtOnce() throws Exception {
        CountingDataSource ds = new CountingDataSource(true);
        try (LockClient client = LockClient.open(LockClientConfig.builder("postgresql://?poolSize=2")
                        .operationTimeout(Duration.ofSeconds(30)).build(), PostgresLockProvider.withDataSource(ds))) {
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    int me = t;
                    done.add(pool.submit(() -> {
                        for (int i = 0; i < 50; i++) {
                            assertTrue(client.holder("bound-" + me).isEmpty());
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get();
                }
            } finally {
                pool.shutdownNow();
            }
        }
        System.out.println("[postgres] DataSource, 8 threads querying: at most " + ds.most.get() + " borrowed at once");
        assertTrue(ds.most.get() <= 2, "borrowed " + ds.most.get() + " at once with poolSize=2");
        assertEquals(0, ds.borrowed.get());
    }

    /** Connections handed out with autocommit off still take and release locks, each statement committed. */
    @Test
    void connectionsWithAutocommitOffWork() throws Exception {
        CountingDataSource ds = new CountingDataSource(false);
        try (LockClient a = LockClient.open(LockClientConfig.builder("postgresql://").build(),
                PostgresLockProvider.withDataSource(ds));
             LockClient b = LockClient.open(server.uri(PostgresFixture.USER, PostgresFixture.PASSWORD,
                     PostgresFixture.DATABASE))) {
            long token;
            try (Lease lease = a.lock("ds-autocommit").tryAcquire().orElseThrow()) {
                token = lease.fencingToken();
                // another client, on its own connections, sees the grant: it was committed
                assertEquals(token, b.holder("ds-autocommit").orElseThrow().fencingToken());
                assertTrue(b.lock("ds-autocommit").tryAcquire().isEmpty());
            }
            assertTrue(b.holder("ds-autocommit").isEmpty());
        }
        assertEquals(0, ds.borrowed.get());
    }
}
