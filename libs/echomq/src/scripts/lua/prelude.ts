/**
 * Lua helpers prepended to every transition script. They are text, not a
 * separate script, so each transition still runs as one EVALSHA.
 *
 * Row fields (kept short because every waiting job pays for them in memory):
 *   d data (JSON; see chunking below)   n name   m max attempts per budget   a attempts (the fencing token)
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

-- Adds n to a counter of the metrics hash; nothing for n = 0.
local function bump(metrics, field, n)
  if n > 0 then
    redis.call('HINCRBY', metrics, field, n)
  end
end

-- One token is enough: an idle worker that wakes claims as much as it can
-- and passes the token on when work is left (see claim).
local function wake(key)
  if redis.call('LLEN', key) == 0 then
    redis.call('RPUSH', key, '1')
  end
end

-- The fencing check: the job is in active and the row still carries the caller's token
-- (attempts) and claimant. A row holds a claimant only while its job is in active: claim
-- sets 'c', and every way out of active (complete, fail, release, reap) deletes it or the
-- row (remove), so a matching claimant proves membership without a ZSCORE. (The model-based
-- test checks the row's exact fields after every step.)
local function holds(row, token, claimant)
  local f = redis.call('HMGET', row, 'a', 'c')
  return f[1] == token and f[2] == claimant
end

-- Payloads are stored in chunks of at most 63 bytes ('d', then 'd2' .. 'dN'), so a waiting
-- job's row keeps Redis's compact listpack encoding, whose default limit is 64 bytes per
-- value (hash-max-listpack-value): a 100-byte payload then costs about 220 bytes of row
-- instead of about 340. (63, not 64: listpack stores strings under 64 bytes with a
-- one-byte header.) Readers fetch 'd' .. 'd4' in one HMGET; only payloads of more than
-- four chunks also store their count in 'dn'. Past ~7 KB a row leaves listpack anyway (too
-- many entries), so large payloads are stored whole.
local CHUNK = 63
local READ_AHEAD = 4
local function put_data(fields, data)
  local len = #data
  fields[#fields + 1] = 'd'
  if len <= CHUNK or len > 7000 then
    fields[#fields + 1] = data
    return
  end
  fields[#fields + 1] = string.sub(data, 1, CHUNK)
  local n = math.ceil(len / CHUNK)
  for i = 2, n do
    fields[#fields + 1] = 'd' .. i
    fields[#fields + 1] = string.sub(data, (i - 1) * CHUNK + 1, i * CHUNK)
  end
  if n > READ_AHEAD then
    fields[#fields + 1] = 'dn'
    fields[#fields + 1] = n
  end
end

-- Reassembles a payload from a row read with HMGET row d d2 d3 d4 dn (f[1] .. f[5]),
-- fetching only the chunks past the read-ahead.
local function get_data(row, f)
  if not f[1] then
    return f[1]
  end
  local parts = { f[1] }
  for i = 2, READ_AHEAD do
    if not f[i] then
      return table.concat(parts)
    end
    parts[i] = f[i]
  end
  local count = tonumber(f[5])
  if count then
    local names = {}
    for i = READ_AHEAD + 1, count do
      names[#names + 1] = 'd' .. i
    end
    parts[#parts + 1] = table.concat(redis.call('HMGET', row, unpack(names)))
  end
  return table.concat(parts)
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
