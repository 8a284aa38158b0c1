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
                + "  acquired_at timestamptz NOT NULL,\n"
                + "  waiter text,\n"
                + "  waiter_since bigint,\n"
                + "  waiter_until timestamptz\n"
                + ")";
        this.createSequence = "CREATE SEQUENCE IF NOT EXISTS " + sequence + " AS bigint MINVALUE 1 NO CYCLE";
        // one round trip on first use: what is there, and what dlock needs of the server
        this.setup = "SELECT current_setting('server_encoding'), current_setting('synchronous_commit'),"
                + " to_regnamespace('" + schema + "') IS NOT NULL, to_regclass('" + table + "') IS NOT NULL,"
                + " to_regclass('" + sequence + "') IS NOT NULL, current_setting('server_version_num')::int,"
                + " current_user";
        String remaining = "greatest(0, ceil(extract(epoch FROM %s.expires_at - now()) * 1000))::bigint";
        String nowMicros = "(extract(epoch FROM now()) * 1000000)::bigint";
        // the ticket: this attempt may take the place next in line (or is in it already) if nobody
        // has it, its holder let it go stale, or this attempt has waited longer ($5, the server's
        // time of its first busy answer, against the holder's)
        String myTurn = "(l.waiter IS NULL OR l.waiter = excluded.owner OR l.waiter_until <= now()"
                + " OR l.waiter_since > $5)";
        // a grant: the lock is free (its lease ended on the server's clock) and it is this attempt's
        // turn; or this owner holds it already (an attempt whose answer was lost)
        String grant = "(l.owner = excluded.owner OR (l.expires_at <= now() AND " + myTurn + "))";
        // $1 name, $2 owner, $3 lease in ms, $4 whether to take the ticket (a waiting attempt's tries
        // after its first), $5 the attempt's waiting-since (server microseconds, or null), $6 the
        // ticket's life in ms. One statement: a grant with a fresh token; or the ticket taken or kept;
        // or nothing changed. Each answers the holder's remaining lease and the server's time, the last
        // from the snapshot taken before the insert.
        this.acquire = jdbc("WITH attempt AS (\n"
                + "  INSERT INTO " + table + " AS l (name, owner, token, expires_at, acquired_at)\n"
                + "  VALUES ($1, $2, nextval('" + sequence + "'), now() + $3 * interval '1 millisecond', now())\n"
                + "  ON CONFLICT (name) DO UPDATE SET\n"
                + "    owner = CASE WHEN " + grant + " THEN excluded.owner ELSE l.owner END,\n"
                + "    token = CASE WHEN " + grant + " THEN excluded.token ELSE l.token END,\n"
                + "    expires_at = CASE WHEN " + grant + " THEN excluded.expires_at ELSE l.expires_at END,\n"
                + "    acquired_at = CASE WHEN " + grant + " THEN excluded.acquired_at ELSE l.acquired_at END,\n"
                + "    waiter = CASE WHEN " + grant + " THEN NULL ELSE excluded.owner END,\n"
                + "    waiter_since = CASE WHEN " + grant + " THEN NULL ELSE $5 END,\n"
                + "    waiter_until = CASE WHEN " + grant + " THEN NULL ELSE now() + $6 * interval '1 millisecond' END\n"
                + "  WHERE " + grant + " OR ($4 AND " + myTurn + ")\n"
                + "  RETURNING l.owner = $2 AS granted, l.token, " + String.format(remaining, "l") + " AS remaining\n"
                + ")\n"
                + "SELECT granted, token, remaining, true, " + nowMicros + " FROM attempt\n"
                + "UNION ALL\n"
                + "SELECT false, NULL::bigint, " + String.format(remaining, "h") + ", false, " + nowMicros + "\n"
                + "FROM " + table + " h WHERE h.name = $1 AND NOT EXISTS (SELECT 1 FROM attempt)");
        // $1 name, $2 owner, $3 token: owner-checked; the row goes unless someone holds a live ticket,
        // whose place it keeps (the lease is ended instead); the notice in the same transaction
        String free = "expires_at = now()";
        String ticketLive = "waiter IS NOT NULL AND waiter_until > now()";
        this.release = jdbc("WITH released AS (\n"
                + "  DELETE FROM " + table + " WHERE name = $1 AND owner = $2 AND token = $3 AND expires_at > now()\n"
                + "    AND NOT (" + ticketLive + ") RETURNING name\n"
                + "), handed AS (\n"
                + "  UPDATE " + table + " SET " + free + " WHERE name = $1 AND owner = $2 AND token = $3\n"
                + "    AND expires_at > now() AND " + ticketLive + " RETURNING name\n"
                + ")\n"
                + "SELECT pg_notify('" + CHANNEL + "', " + notifyPrefix + "name)\n"
                + "FROM (SELECT name FROM released UNION ALL SELECT name FROM handed) AS done");
        // $1 name, $2 owner: undo a grant whose answer was lost, and leave the line
        this.abandon = jdbc("WITH gone AS (\n"
                + "  DELETE FROM " + table + " WHERE name = $1 AND owner = $2 AND NOT (" + ticketLive + ")"
                + " RETURNING name\n"
                + "), freed AS (\n"
                + "  UPDATE " + table + " SET " + free + " WHERE name = $1 AND owner = $2 AND " + ticketLive
                + " RETURNING name\n"
                + "), unqueued AS (\n"
                + "  UPDATE " + table + " SET waiter = NULL, waiter_since = NULL, waiter_until = NULL\n"
                + "  WHERE name = $1 AND waiter = $2 RETURNING name\n"
                + ")\n"
                + "SELECT pg_notify('" + CHANNEL + "', " + notifyPrefix + "name)\n"
                + "FROM (SELECT name FROM gone UNION ALL SELECT name FROM freed UNION ALL SELECT name FROM unqueued)"
                + " AS done");
        // $1 names, $2 owners, $3 tokens, $4 leases in ms: every grant still held (not expired) by
        // its owner and token gets a new expiry; answers the owners renewed
        this.renew = jdbc("UPDATE " + table + " AS l SET expires_at = now() + r.ms * interval '1 millisecond'\n"
                + "FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS r(name, owner, token, ms)\n"
                + "WHERE l.name = r.name AND l.owner = r.owner AND l.token = r.token AND l.expires_at > now()\n"
                + "RETURNING l.owner");
        this.holder = jdbc("SELECT owner, token, " + String.format(remaining, "l") + "\n"
                + "FROM " + table + " l WHERE name = $1 AND expires_at > now()");
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
