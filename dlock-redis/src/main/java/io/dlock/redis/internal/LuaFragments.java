package io.dlock.redis.internal;

/**
 * Lua text shared by several {@link Script}s, pasted into each script's source (a script is one
 * EVAL body, so sharing is textual): one mechanism written once.
 */
final class LuaFragments {

    /**
     * The lock-delay check of a grant (see {@link Script#ACQUIRE} for the marker's meaning).
     * Expects KEYS[3] = the lock-delay marker and ARGV[3] = the lock-delay in ms (0: none); defines
     * the local {@code now}, the server's TIME in microseconds as a decimal string; returns
     * {@code {2, ms left, marker time, 1 if the server told its run id else 0}} from the script
     * while the lock-delay refuses grants, and falls through otherwise.
     */
    static final String LOCK_DELAY_CHECK = """
            if redis.replicate_commands then redis.replicate_commands() end
            local t = redis.call('TIME')
            local now = t[1] .. string.format('%06d', tonumber(t[2]))
            local delay = tonumber(ARGV[3])
            if delay > 0 then
              local info = redis.pcall('INFO', 'server')
              local run = type(info) == 'string' and string.match(info, 'run_id:(%x+)') or nil
              local m = redis.call('GET', KEYS[3])
              local mrun, mat, mdelay
              if m then mrun, mat, mdelay = string.match(m, '^(%S+) (%d+) (%d+)$') end
              if (not mrun) or (run and mrun ~= run) or tonumber(now) < tonumber(mat) then
                redis.call('SET', KEYS[3], (run or '-') .. ' ' .. now .. ' ' .. ARGV[3])
                return {2, delay, now, run and 1 or 0}
              end
              local d = tonumber(mdelay)
              if delay > d then
                d = delay
                redis.call('SET', KEYS[3], mrun .. ' ' .. mat .. ' ' .. ARGV[3])
              end
              local left = d * 1000 - (tonumber(now) - tonumber(mat))
              if left > 0 then
                return {2, math.ceil(left / 1000), mat, run and 1 or 0}
              end
            end
            """;

    private LuaFragments() {
    }
}
