package io.dlock.postgres.internal;

/**
 * The SQL the backend sends, for one schema. Every statement that decides anything reads the
 * SERVER's clock ({@code now()}, the start of the statement's own transaction, which is after the
 * server received the request); no statement carries a client's time. Each operation is one
 * statement, so one round trip, in its own transaction (autocommit).
 *
 * <p>The schema is a lower-case identifier checked by {@link PgSettings}, so it is written into the
 * statements as it is; every value is a bind parameter.
 */
final class PgSql {

    /** The one channel of release notices; the payload is {@code SCHEMA.NAME}. */
    static final String CHANNEL = "dlock_released";

    final String schema;
    final String table;
    final String sequence;
    final String createSchema;
    final String createTable;
    final String createSequence;
    final String setup;
    final Jdbc acquire;
    final Jdbc release;
    final Jdbc abandon;
    final Jdbc renew;
    final Jdbc holder;

    PgSql(String schema) {
        this.schema = schema;
        this.table = schema + ".dlock_locks";
        this.sequence = schema + ".dlock_fence";
        String notifyPrefix = "'" + schema + ".' || ";
        this.createSchema = "CREATE SCHEMA IF NOT EXISTS " + schema;
        this.createTable = "CREATE TABLE IF NOT EXISTS " + table + " (\n"
                + "  name text COLLATE \"C\" PRIMARY KEY,\n"
                + "  owner text NOT NULL,\n"
                + "  token bigint NOT NULL,\n"
                + "  expires_at timestamptz NOT NULL,\n"
                + "  acquired_at timestamptz NOT NULL\n"
                + ")";
        this.createSequence = "CREATE SEQUENCE IF NOT EXISTS " + sequence + " AS bigint MINVALUE 1 NO CYCLE";
        // one round trip on first use: what is there, and what dlock needs of the server
        this.setup = "SELECT current_setting('server_encoding'), current_setting('synchronous_commit'),"
                + " to_regnamespace('" + schema + "') IS NOT NULL, to_regclass('" + table + "') IS NOT NULL,"
                + " to_regclass('" + sequence + "') IS NOT NULL, current_setting('server_version_num')::int,"
                + " current_user";
        // $1 name, $2 owner, $3 lease in ms. Grants a free or expired lock (or one this owner holds:
        // an attempt whose answer was lost), with a fresh token; otherwise answers the holder's
        // remaining lease in ms, from the snapshot taken before the insert, in the same round trip.
        this.acquire = jdbc("WITH granted AS (\n"
                + "  INSERT INTO " + table + " AS l (name, owner, token, expires_at, acquired_at)\n"
                + "  VALUES ($1, $2, nextval('" + sequence + "'), now() + $3 * interval '1 millisecond', now())\n"
                + "  ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, token = excluded.token,\n"
                + "    expires_at = excluded.expires_at, acquired_at = excluded.acquired_at\n"
                + "  WHERE l.expires_at <= now() OR l.owner = excluded.owner\n"
                + "  RETURNING l.token\n"
                + ")\n"
                + "SELECT token, NULL::bigint FROM granted\n"
                + "UNION ALL\n"
                + "SELECT NULL::bigint, greatest(0, ceil(extract(epoch FROM h.expires_at - now()) * 1000))::bigint\n"
                + "FROM " + table + " h WHERE h.name = $1 AND NOT EXISTS (SELECT 1 FROM granted)");
        // $1 name, $2 owner, $3 token: owner-checked delete, and the notice in the same transaction
        this.release = jdbc("WITH released AS (\n"
                + "  DELETE FROM " + table + " WHERE name = $1 AND owner = $2 AND token = $3\n"
                + "  RETURNING name, expires_at > now() AS held\n"
                + ")\n"
                + "SELECT held, pg_notify('" + CHANNEL + "', " + notifyPrefix + "name) FROM released");
        // $1 name, $2 owner: undo a grant whose answer was lost
        this.abandon = jdbc("WITH abandoned AS (\n"
                + "  DELETE FROM " + table + " WHERE name = $1 AND owner = $2 RETURNING name\n"
                + ")\n"
                + "SELECT pg_notify('" + CHANNEL + "', " + notifyPrefix + "name) FROM abandoned");
        // $1 names, $2 owners, $3 tokens, $4 leases in ms: every grant still held (not expired) by
        // its owner and token gets a new expiry; answers the owners renewed
        this.renew = jdbc("UPDATE " + table + " AS l SET expires_at = now() + r.ms * interval '1 millisecond'\n"
                + "FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS r(name, owner, token, ms)\n"
                + "WHERE l.name = r.name AND l.owner = r.owner AND l.token = r.token AND l.expires_at > now()\n"
                + "RETURNING l.owner");
        this.holder = jdbc("SELECT owner, token, greatest(0, ceil(extract(epoch FROM expires_at - now()) * 1000))::bigint\n"
                + "FROM " + table + " WHERE name = $1 AND expires_at > now()");
    }

    /**
     * The JDBC form of a statement: {@code ?} for {@code $n}, each parameter in order. The
     * statements above use {@code $1} twice in places; JDBC has no numbered parameters, so those
     * are bound twice.
     *
     * @param sql a statement with {@code $n} parameters
     * @return the statement with {@code ?}, and the parameter number of each {@code ?}
     */
    static Jdbc jdbc(String sql) {
        StringBuilder out = new StringBuilder(sql.length());
        java.util.List<Integer> order = new java.util.ArrayList<>();
        for (int i = 0; i < sql.length(); i++) {
            char c = sql.charAt(i);
            if (c == '$' && i + 1 < sql.length() && Character.isDigit(sql.charAt(i + 1))) {
                int j = i + 1;
                while (j < sql.length() && Character.isDigit(sql.charAt(j))) {
                    j++;
                }
                order.add(Integer.parseInt(sql.substring(i + 1, j)));
                out.append('?');
                i = j - 1;
            } else {
                out.append(c);
            }
        }
        return new Jdbc(out.toString(), order.stream().mapToInt(Integer::intValue).toArray());
    }

    /**
     * A statement in JDBC form.
     *
     * @param sql the text with {@code ?}
     * @param params for each {@code ?}, the number of the parameter it stands for, from 1
     */
    record Jdbc(String sql, int[] params) {
    }
}
