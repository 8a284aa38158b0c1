package io.dlock.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.postgres.PostgresServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code dlock demo --uri postgresql://...}: the seed scenario with the ledger as a real table in
 * that database, guarded by a fence column, against a PostgreSQL server started by the test.
 */
class DemoPostgresTest {

    private static PostgresServer server;
    private static Path dir;

    @BeforeAll
    static void start() throws Exception {
        server = PostgresServer.start();
        dir = Files.createTempDirectory("dlock-demo-pg");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void theDemoRunsWithItsLedgerInAPostgresTable() throws Exception {
        String uri = server.superuserUri("postgres");
        CliProcess p = CliProcess.run(dir, Duration.ofSeconds(120), "demo", "--uri", uri, "--lease", "1s");
        assertEquals(0, p.exitCode(Duration.ofSeconds(30)), p.describe());
        String out = p.stdout();
        System.out.println(out);
        assertTrue(out.contains("Ledger: the table public.dlock_demo_ledger"), out);
        assertTrue(!out.contains("pg-test-superuser"), "the password must not be shown:\n" + out);
        Matcher noLock = Pattern.compile("1\\. no lock\\s+30\\s+(\\d+)\\s+(\\d+)\\s+-").matcher(out);
        assertTrue(noLock.find(), out);
        assertTrue(Pattern.compile("2\\. with dlock\\s+30\\s+30\\s+0\\s+0").matcher(out).find(), out);
        assertTrue(Pattern.compile("3\\. stalled replica\\s+1\\s+1\\s+0\\s+1").matcher(out).find(), out);
        assertTrue(out.contains("the ledger rejects it"), out);
        // the table is real, and each run's rows are gone when it ends
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + server.address().getPort()
                + "/postgres?user=postgres&password=pg-test-superuser");
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*), to_regclass('public.dlock_demo_ledger') IS NOT NULL"
                     + " FROM public.dlock_demo_ledger")) {
            rs.next();
            assertEquals(0, rs.getInt(1));
            assertTrue(rs.getBoolean(2));
        }
    }
}
