/**
 * The PostgreSQL backend of dlock: {@code postgresql://} and {@code postgres://} URIs, or an
 * application's own {@code javax.sql.DataSource}, on the PostgreSQL JDBC driver. Exports only its
 * provider; the backend itself is internal.
 */
module io.dlock.postgres {
    requires transitive io.dlock;
    requires transitive java.sql;
    requires org.postgresql.jdbc;
    requires org.slf4j;

    exports io.dlock.postgres;

    provides io.dlock.spi.LockProvider with io.dlock.postgres.PostgresLockProvider;
}
