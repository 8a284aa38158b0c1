-- dlock-postgres: the schema objects the backend uses, for a deployment where dlock's role may not
-- create them itself (without CREATE on the schema, the backend reports MISSING_RESOURCE).
-- Run as the schema's owner (psql -v schema=public -v role=dlock -f postgres-schema.sql), with
-- the same schema as the uri's ?schema= (default public). The backend creates exactly these
-- objects on first use when its role may; PostgresSchemaScriptTest checks that they match.

CREATE SCHEMA IF NOT EXISTS :"schema";

-- one row per held (or expired, not yet taken over) lock; a released lock's row is deleted unless
-- a waiter holds the place next in line
CREATE TABLE IF NOT EXISTS :"schema".dlock_locks (
  name text COLLATE "C" PRIMARY KEY,   -- the lock name, unchanged (binary collation: injective)
  owner text NOT NULL,                 -- the grant's owner id (128-bit random, hex)
  token bigint NOT NULL,               -- the grant's fencing token, from dlock_fence
  expires_at timestamptz NOT NULL,     -- end of the lease, on the server's clock
  acquired_at timestamptz NOT NULL,    -- when the grant was made, on the server's clock (for people)
  waiter text,                         -- the owner id of the attempt next in line, if any
  waiter_since bigint,                 -- when it started waiting (server time, microseconds)
  waiter_until timestamptz             -- when its place lapses unless it asks again (server time)
);

-- the one fencing counter of every lock name: only grows, across restarts and crash recovery
CREATE SEQUENCE IF NOT EXISTS :"schema".dlock_fence AS bigint MINVALUE 1 NO CYCLE;

-- what dlock's role needs
GRANT USAGE ON SCHEMA :"schema" TO :"role";
GRANT SELECT, INSERT, UPDATE, DELETE ON :"schema".dlock_locks TO :"role";
GRANT USAGE ON SEQUENCE :"schema".dlock_fence TO :"role";
