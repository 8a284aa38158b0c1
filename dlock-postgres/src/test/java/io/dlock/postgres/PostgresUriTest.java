package io.dlock.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Capability;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LostReason;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.BackendUri;
import io.dlock.spi.LockBackend;
import java.io.PrintWriter;
import java.sql.Connection;
import java.time.Duration;
import java.util.Set;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** URI parsing: what is accepted (with no I/O), and what is rejected naming the part, never the password. */
class PostgresUriTest {

    private static final String SECRET = "t0p-s3cret";

    private static final BackendEvents NO_EVENTS = new BackendEvents() {
        @Override
        public void allLeasesLost(LostReason reason) {
        }

        @Override
        public void leaseLost(String ownerId, LostReason reason) {
        }
    };

    private static LockBackend<?> open(PostgresLockProvider provider, String uri) {
        LockClientConfig config = LockClientConfig.builder(uri).operationTimeout(Duration.ofSeconds(1)).build();
        return provider.open(new BackendContext(config, BackendUri.parse(uri), r -> {
            Thread t = new Thread(r, "test-pg-uri");
            t.setDaemon(true);
            return t;
        }, NO_EVENTS));
    }

    private static void assertRejected(PostgresLockProvider provider, String uri, String part) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> open(provider, uri), uri);
        assertTrue(e.getMessage().contains(part), "'" + part + "' not named in: " + e.getMessage());
        assertFalse(e.getMessage().contains(SECRET), e.getMessage());
    }

    /** A DataSource that must never be asked: opening a backend makes no connection. */
    private static final DataSource NEVER = new DataSource() {
        @Override
        public Connection getConnection() {
            throw new AssertionError("no connection may be made when the backend opens");
        }

        @Override
        public Connection getConnection(String username, String password) {
            throw new AssertionError("no connection may be made when the backend opens");
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
    };

    @Test
    void providerNamesItsSchemes() {
        PostgresLockProvider p = new PostgresLockProvider();
        assertEquals("postgres", p.name());
        assertEquals(Set.of("postgresql", "postgres"), p.schemes());
        assertThrows(IllegalArgumentException.class, () -> PostgresLockProvider.withDataSource(null));
    }

    @Test
    void acceptsTheUriFormsWithoutConnecting() {
        // nothing listens on port 1: opening must not touch the server
        for (String uri : new String[] {"postgresql://127.0.0.1:1/db", "postgres://127.0.0.1:1/db", "postgresql://localhost/db",
                "postgresql://u:" + SECRET + "@127.0.0.1:1/db?schema=locks&sslmode=require&poolSize=2",
                "postgresql://u:" + SECRET + "@[::1]:1/db?sslmode=verify-full", "POSTGRESQL://127.0.0.1:1/my%20db"}) {
            LockBackend<?> b = open(new PostgresLockProvider(), uri);
            try {
                assertEquals(Set.of(Capability.FENCING, Capability.NOTIFY_WAITERS, Capability.HOLDER_QUERY),
                        b.capabilities());
                assertFalse(b.toString().contains(SECRET), b.toString());
            } finally {
                b.close();
            }
        }
    }

    @Test
    void rejectsWhatItDoesNotUnderstandNamingThePart() {
        PostgresLockProvider p = new PostgresLockProvider();
        String auth = "postgresql://u:" + SECRET + "@127.0.0.1:1";
        assertRejected(p, auth + "/db?prefix=x", "parameter 'prefix'");
        assertRejected(p, auth + "/db?prefix=x&tabel=y", "parameters 'prefix', 'tabel'");
        assertRejected(p, auth, "database");
        assertRejected(p, auth + "/", "database");
        assertRejected(p, auth + "/db/more", "path");
        assertRejected(p, auth + "/db?sslmode=sometimes", "sslmode");
        assertRejected(p, auth + "/db?schema=Locks", "schema");
        assertRejected(p, auth + "/db?schema=a;drop", "schema");
        assertRejected(p, auth + "/db?schema=" + "x".repeat(64), "schema");
        assertRejected(p, auth + "/db?poolSize=0", "poolSize");
        assertRejected(p, auth + "/db?poolSize=65", "poolSize");
        assertRejected(p, auth + "/db?sslrootcert=/no/such/file", "sslrootcert");
        assertRejected(p, "postgresql://127.0.0.1:1,127.0.0.2:1/db", "host");
        assertRejected(p, "postgresql:///db", "host");
        assertRejected(p, "postgresql://" + SECRET + "@127.0.0.1:1/db", "user info");
        assertRejected(p, "postgresql://:" + SECRET + "@127.0.0.1:1/db", "user");
        assertRejected(p, "redis://127.0.0.1:1/db", "scheme");
    }

    @Test
    void aDataSourceClientsUriNamesOnlyTheSchemaAndPoolSize() {
        PostgresLockProvider p = PostgresLockProvider.withDataSource(NEVER);
        for (String uri : new String[] {"postgresql://", "postgresql://?schema=locks&poolSize=2", "postgres:///"}) {
            open(p, uri).close();
        }
        assertRejected(p, "postgresql://127.0.0.1:5432/db", "DataSource");
        assertRejected(p, "postgresql://u:" + SECRET + "@/", "DataSource");
        assertRejected(p, "postgresql:///db", "path");
        assertRejected(p, "postgresql://?sslmode=require", "parameter 'sslmode'");
        assertRejected(p, "postgresql://?schema=BAD", "schema");
    }

    /** Nothing listens: a retryable failure at once, and the message shows no secret. */
    @Test
    void aRefusedConnectionIsRetryableAndShowsNoSecret() throws Exception {
        String uri = "postgresql://someone:" + SECRET + "@127.0.0.1:" + io.dlock.tck.ServerProcesses.freeLoopbackPort()
                + "/db";
        try (LockClient c = LockClient.open(LockClientConfig.builder(uri).operationTimeout(Duration.ofSeconds(5)).build())) {
            LockBackendException e = assertThrows(LockBackendException.class, () -> c.lock("x").tryAcquire());
            assertTrue(e.retryable(), e.toString());
            assertFalse(e.getMessage().contains(SECRET), e.getMessage());
            assertFalse(e.getMessage().contains("someone"), e.getMessage());
        }
    }
}
