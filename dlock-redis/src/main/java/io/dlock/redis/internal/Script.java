package io.dlock.redis.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The Lua scripts, each run atomically by Redis with EVALSHA (and EVAL when the server does not
 * know it yet, after a restart say). Numbers that must stay exact (tokens) travel as strings:
 * Lua 5.1 numbers are doubles and print in exponent notation above 10^14.
 */
enum Script {

    /**
     * Acquire. KEYS: lock key, counter key, lock-delay marker. ARGV: owner id, lease in ms,
     * lock-delay in ms (0: none). Returns {1, token} for a grant, {0, pttl} when another owner
     * holds the lock, and {2, ms left, marker time, 1 if the server told its run id else 0} while
     * the lock-delay refuses grants.
     *
     * <p>If this owner already holds the lock (a retry after a lost answer), extends it and returns
     * its token: the grant is the same, never a second one.
     *
     * <p>The lock-delay. The marker holds "RUNID TIME DELAY": the run id of the server process that
     * wrote it (from INFO; {@code -} when the user may not run INFO), the server's TIME in
     * microseconds when it was written, and the longest lock-delay in ms any client has asked for
     * since. It is stored without expiry. A free lock is granted only if the marker exists, was
     * written by this server process, and at least max(DELAY, ARGV[3]) has passed since TIME. If
     * the marker is missing (the data set was lost: a restart without persistence, a flush, a
     * resync to an empty primary), names another process (a restart from an old snapshot, a
     * failover to a replica), or lies in the future (the clock went back), the marker is written
     * anew with the current time and the grant refused: a lease granted before the loss ended on
     * its holder's clock within its lease time of the loss, and no lease is longer than the
     * lock-delay, so nobody is granted a lock that a lease from before can still cover. When INFO is
     * denied, any existing marker is accepted, so only a missing marker starts a lock-delay.
     *
     * <p>A grant raises the shared counter to at least the server's TIME in microseconds, bumps
     * it, and stores OWNER:TOKEN with the lease as expiry: tokens increase with every grant on one
     * server, and keep increasing after a restart that lost the counter or a failover to a replica
     * whose counter is behind, as long as the new server's clock is not behind by more than the
     * time the failover took. Lua numbers are exact to 2^53, far above microseconds since 1970.
     */
    ACQUIRE("""
            local v = redis.call('GET', KEYS[1])
            if v then
              local mine = ARGV[1] .. ':'
              if string.sub(v, 1, #mine) == mine then
                redis.call('PEXPIRE', KEYS[1], ARGV[2])
                return {1, string.sub(v, #mine + 1)}
              end
              return {0, redis.call('PTTL', KEYS[1])}
            end
            """ + LuaFragments.LOCK_DELAY_CHECK + """
            local c = redis.call('GET', KEYS[2])
            if (not c) or tonumber(c) < tonumber(now) then
              redis.call('SET', KEYS[2], now)
            end
            redis.call('INCR', KEYS[2])
            local token = redis.call('GET', KEYS[2])
            redis.call('SET', KEYS[1], ARGV[1] .. ':' .. token, 'PX', ARGV[2])
            return {1, token}
            """),

    /**
     * Release. KEYS: lock key. ARGV: expected value OWNER:TOKEN, release channel. Deletes the key
     * and publishes a notice only if it still holds the expected value. Returns 1 or 0.
     */
    RELEASE("""
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              redis.call('DEL', KEYS[1])
              redis.call('PUBLISH', ARGV[2], 'released')
              return 1
            end
            return 0
            """),

    /**
     * Abandon an acquire whose answer was lost. KEYS: lock key. ARGV: owner id, release channel.
     * Deletes the key only if this owner holds it, whatever the token. Returns 1 or 0.
     */
    ABANDON("""
            local v = redis.call('GET', KEYS[1])
            local mine = ARGV[1] .. ':'
            if v and string.sub(v, 1, #mine) == mine then
              redis.call('DEL', KEYS[1])
              redis.call('PUBLISH', ARGV[2], 'released')
              return 1
            end
            return 0
            """),

    /**
     * Batched renew. KEYS: n lock keys. ARGV: n expected values, then n leases in ms. Extends each
     * key that still holds its expected value. Returns n results, 1 (renewed) or 0.
     */
    RENEW("""
            local n = #KEYS
            local out = {}
            for i = 1, n do
              if redis.call('GET', KEYS[i]) == ARGV[i] then
                redis.call('PEXPIRE', KEYS[i], ARGV[n + i])
                out[i] = 1
              else
                out[i] = 0
              end
            end
            return out
            """),

    /** Holder. KEYS: lock key. Returns {} when free, else {OWNER:TOKEN, pttl}. */
    HOLDER("""
            local v = redis.call('GET', KEYS[1])
            if not v then
              return {}
            end
            return {v, redis.call('PTTL', KEYS[1])}
            """),

    /**
     * Redlock, phase 1 on one node (see {@code RedlockBackend}). KEYS: lock key, counter key,
     * lock-delay marker. ARGV: owner id, lease in ms, lock-delay in ms (0: none), the round's value
     * {@code OWNER:0.ROUND}. Another owner's key answers {0, pttl, 1 if it holds a token else 0 (a round
     * in flight)}; so does this owner's key once a
     * round tokened it (that round's undo removes it) or holds a later round's value (this request
     * came late: it must not take the key back from the later round). Otherwise, past the lock-delay check
     * ({@link LuaFragments#LOCK_DELAY_CHECK}, answering {2, ...}), sets the key to the round's value
     * with the lease as expiry and answers {1, max(counter, TIME in microseconds)} without writing
     * the counter: phase 2 raises it to the token the majority agrees on.
     */
    REDLOCK_LOCK("""
            local v = redis.call('GET', KEYS[1])
            local mine = ARGV[1] .. ':'
            if v then
              local round = string.match(string.sub(v, #mine + 1), '^0%.(%d+)$')
              if string.sub(v, 1, #mine) ~= mine or (not round)
                  or tonumber(round) > tonumber(string.match(ARGV[4], '(%d+)$')) then
                local settled = string.match(v, ':0%.%d+$') and 0 or 1
                return {0, redis.call('PTTL', KEYS[1]), settled}
              end
            end
            """ + LuaFragments.LOCK_DELAY_CHECK + """
            local c = redis.call('GET', KEYS[2])
            local raised = now
            if c and tonumber(c) > tonumber(now) then raised = c end
            redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[2])
            return {1, raised}
            """),

    /**
     * Redlock, phase 2 on one node. KEYS: lock key, counter key. ARGV: the round's value
     * {@code OWNER:0.ROUND}, the grant's value {@code OWNER:TOKEN}, the token. Only while the key
     * still holds the round's value: sets it to the grant's value, keeping its expiry, and raises
     * the counter to the token if below. Returns 1 (also when the key holds the grant's value
     * already: a repeat), else 0.
     */
    REDLOCK_TOKEN("""
            local v = redis.call('GET', KEYS[1])
            if v == ARGV[2] then
              return 1
            end
            if v ~= ARGV[1] then
              return 0
            end
            local ttl = redis.call('PTTL', KEYS[1])
            if ttl <= 0 then
              return 0
            end
            redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
            local c = redis.call('GET', KEYS[2])
            if (not c) or tonumber(c) < tonumber(ARGV[3]) then
              redis.call('SET', KEYS[2], ARGV[3])
            end
            return 1
            """),

    /**
     * Redis Cluster's warm-up of one node's lock-delay markers (see {@link ClusterKeys}): starts
     * the lock-delay of every listed slot whose marker is missing or names another server process,
     * as {@link #ACQUIRE} would at that slot's first touch, so that after a node lost its data the
     * lock-delay runs once for all its slots instead of starting anew at each slot's first grant.
     * It only ever starts a lock-delay, never shortens one. KEYS: none. ARGV: the prefix, the
     * lock-delay in ms, then the hash tags of the slots. A slot the node does not serve is skipped.
     * Returns how many markers it wrote. Needs Redis 7 (the flag lets it touch keys of many slots).
     */
    WARM_UP("""
            #!lua flags=allow-cross-slot-keys
            local info = redis.pcall('INFO', 'server')
            local run = type(info) == 'string' and string.match(info, 'run_id:(%x+)') or nil
            local t = redis.call('TIME')
            local now = t[1] .. string.format('%06d', tonumber(t[2]))
            local n = 0
            for i = 3, #ARGV do
              local k = ARGV[1] .. '{' .. ARGV[i] .. '}epoch'
              local m = redis.pcall('GET', k)
              if not (type(m) == 'table' and m.err) then
                local mrun, mat
                if m then mrun, mat = string.match(m, '^(%S+) (%d+) (%d+)$') end
                if (not mrun) or (run and mrun ~= run) or tonumber(now) < tonumber(mat) then
                  local w = redis.pcall('SET', k, (run or '-') .. ' ' .. now .. ' ' .. ARGV[2])
                  if not w.err then n = n + 1 end
                end
              end
            end
            return n
            """);

    private final String source;
    private final String sha;

    Script(String source) {
        this.source = source;
        this.sha = sha1(source);
    }

    String source() {
        return source;
    }

    String sha() {
        return sha;
    }

    private static String sha1(String s) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-1").digest(s.getBytes(StandardCharsets.UTF_8));
            StringBuilder b = new StringBuilder(40);
            for (byte x : d) {
                b.append(Character.forDigit((x >> 4) & 0xF, 16)).append(Character.forDigit(x & 0xF, 16));
            }
            return b.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is not available", e);
        }
    }
}
