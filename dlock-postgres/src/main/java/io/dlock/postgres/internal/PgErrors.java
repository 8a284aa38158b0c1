package io.dlock.postgres.internal;

import io.dlock.LockBackendException;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import java.sql.SQLException;
import javax.net.ssl.SSLException;

/**
 * Turns the driver's exceptions into dlock's, by SQLSTATE (the five-character code PostgreSQL and
 * the JDBC driver give every error) and exception type, never by message text. Which codes mean a
 * configuration failure (not retryable): see {@link #kind}. Stateless.
 */
final class PgErrors {

    private PgErrors() { }

    /**
     * The kind of configuration failure an exception shows, or null for a failure that may pass
     * (no answer, a broken connection, a server starting or shutting down, too many connections,
     * a serialization failure, a statement cancelled).
     *
     * @param e the driver's exception
     * @param settings what the client asked for (whether it gave a password, whether it requires TLS)
     * @return the kind, or null
     */
    static Kind kind(SQLException e, PgSettings settings) {
        if (hasCause(e, SSLException.class)) {
            return Kind.TLS; // an untrusted certificate, a host name that does not match
        }
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        switch (state) {
            case "28P01": // invalid_password
            case "28000": // invalid_authorization_specification: no pg_hba.conf entry, role may not log in
                return Kind.CREDENTIALS;
            case "08004": // the driver's "connection rejected": no password to give, or no TLS where required
                if (settings.host != null && settings.password == null) {
                    return Kind.CREDENTIALS;
                }
                return settings.tlsRequired() ? Kind.TLS : null;
            case "42501": // insufficient_privilege
                return Kind.PERMISSION;
            case "3D000": // invalid_catalog_name: the database does not exist
            case "3F000": // invalid_schema_name
            case "42P01": // undefined_table: dlock's table was dropped after the client checked it
            case "42P02": // undefined_parameter
                return Kind.MISSING_RESOURCE;
            case "08P01": // protocol_violation: not a PostgreSQL server, or one that speaks another protocol
            case "25006": // read_only_sql_transaction: a hot standby, or default_transaction_read_only
            case "42601": // syntax_error: a server older than 9.5 (no ON CONFLICT)
            case "42883": // undefined_function: the same
            case "0A000": // feature_not_supported
            case "22021": // character_not_in_repertoire: a database whose encoding cannot hold the name
            case "22P05": // untranslatable_character
                return Kind.INCOMPATIBLE_SERVER;
            default:
                return null;
        }
    }

    /**
     * Wraps a driver exception: a {@link LockConfigurationException} of its kind, else a retryable
     * {@link LockBackendException}. The driver's and server's text goes through
     * {@code BackendUri.scrub}, so no part of the user info shows.
     *
     * @param e the driver's exception
     * @param what the operation, e.g. {@code "acquire of lock 'x'"}
     * @param lockName the lock, or null
     * @param settings the client's settings
     * @return the exception to throw
     */
    static LockBackendException translate(SQLException e, String what, String lockName, PgSettings settings) {
        Kind kind = kind(e, settings);
        String detail = settings.uri.scrub(String.valueOf(e.getMessage()));
        String state = e.getSQLState() == null ? "" : " [SQLSTATE " + e.getSQLState() + "]";
        if (kind == null) {
            return new LockBackendException("the " + what + " failed on " + settings.server() + ": " + detail + state,
                    lockName, e);
        }
        return new LockConfigurationException(kind, "the " + what + " failed on " + settings.server() + ": " + detail
                + state + hint(kind, settings), lockName, e);
    }

    private static String hint(Kind kind, PgSettings settings) {
        switch (kind) {
            case CREDENTIALS:
                return " (check the user and password in the uri, and pg_hba.conf on the server: a hostssl entry also "
                        + "needs a uri with sslmode=require or stronger)";
            case PERMISSION:
                return " (grant dlock's role SELECT, INSERT, UPDATE and DELETE on " + settings.schema + ".dlock_locks "
                        + "and USAGE on " + settings.schema + ".dlock_fence; see io/dlock/postgres/postgres-schema.sql in the dlock-postgres jar)";
            case MISSING_RESOURCE:
                return " (check the database and schema in the uri; io/dlock/postgres/postgres-schema.sql in the dlock-postgres jar creates dlock's table)";
            case TLS:
                return settings.tlsRequired() ? " (the uri's sslmode=" + settings.sslMode + " requires TLS that the "
                        + "server does not offer or that does not verify: check the server's ssl setting and "
                        + "sslrootcert)" : " (check the server's certificate and the uri's sslrootcert)";
            default:
                return " (check that the uri names a PostgreSQL 9.5 or later primary in read-write mode)";
        }
    }

    /** @return whether the SQLSTATE says the connection is gone (class 08) or was never made */
    static boolean connectionLost(SQLException e) {
        String state = e.getSQLState();
        return state == null || state.startsWith("08") || state.startsWith("57P");
    }

    static boolean hasCause(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return false;
    }
}
