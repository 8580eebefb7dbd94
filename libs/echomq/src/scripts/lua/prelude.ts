/**
 * Lua helpers prepended to every transition script. They are text, not a
 * separate script, so each transition still runs as one EVALSHA.
 *
 * Row fields (kept short because every waiting job pays for them in memory):
 *   d data (JSON)   n name   m max attempts per budget   a attempts (the fencing token)
 *   b attempts at the start of the current retry budget   c claimant of the current claim
 *   e last error    r result   f finished-at ms   k idempotency key   p progress (JSON)
 */
export const PRELUDE = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function emit(stream, maxlen, ...)
  redis.call('XADD', stream, 'MAXLEN', '~', maxlen, '*', ...)
end

-- One token is enough: an idle worker that wakes claims as much as it can
-- and passes the token on when work is left (see claim).
local function wake(key)
  if redis.call('LLEN', key) == 0 then
    redis.call('RPUSH', key, '1')
  end
end

-- The fencing check: the job is in active and the row still carries the
-- caller's token (attempts) and claimant.
local function holds(active, row, id, token, claimant)
  if not redis.call('ZSCORE', active, id) then
    return false
  end
  local f = redis.call('HMGET', row, 'a', 'c')
  return f[1] == token and f[2] == claimant
end

-- Attempts spent in the current retry budget.
local function spent(row)
  local f = redis.call('HMGET', row, 'a', 'b')
  return (tonumber(f[1]) or 0) - (tonumber(f[2]) or 0)
end
`;

/** Composes a script: its documented header, then the shared helpers, then its body. */
export function luaScript(header: string, body: string): string {
  return `${header.trim()}\n${PRELUDE}\n${body.trim()}\n`;
}
