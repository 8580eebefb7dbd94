/**
 * Lua helpers prepended to every transition script. They are text, not a
 * separate script, so each transition still runs as one EVALSHA.
 *
 * Row fields (kept short because every waiting job pays for them in memory):
 *   d data (JSON; see chunking below)   n name   a attempts (the fencing token)
 *   m max attempts per budget, only when the job was enqueued with its own
 *   w max attempts of the worker that claimed it last (written by each claim of a job without 'm')
 *   o the job's own backoff policy (JSON), only when it was enqueued with one
 *   b attempts at the start of the current retry budget   c claimant of the current claim
 *   e last error    r result   f finished-at ms   k idempotency key   p progress (JSON)
 *   l lane (absent: the default lane)   y priority level (absent: 0)   t the job's own timeout ms
 *   sk schedule key of an occurrence   sa its planned run-at ms (schedules/)
 *   dk debounce key   df first enqueue ms of a debounced job   dm its deadline when created with
 *   maxWaitMs (first enqueue + it; later calls cannot move it)
 *   gn log lines written so far   g:<n> log line n (the last 100 kept; job-log.lua)
 *   x crash suspect: 1 once reap returned the job (its worker may have died of it); complete,
 *   fail and throttle clear it, so a claim hands the job out alone until then (claim.lua)
 */
import { FLOW_PRELUDE } from './flow';
import { JOB_ROW_PRELUDE } from './job-row';
import { RETENTION_PRELUDE } from './retention';
import { helpersFor } from './shake';
import {
  ERROR_STACK_MAX,
  ERROR_TEXT_MAX,
  EVENT_ERROR_MAX_BYTES,
  LUA_UNPACK_SLICE,
  SCRIPT_BATCH_MAX,
} from '../limits';

/**
 * The budget of a row that has neither its own ('m') nor a serving worker's ('w'): the
 * built-in maxAttempts (QUEUE_DEFAULTS; a unit test keeps the two equal). Scripts cannot
 * import the queue options, which sit above them.
 */
export const BUILT_IN_MAX_ATTEMPTS = 3;

export const PRELUDE = `
local BATCH_MAX = ${SCRIPT_BATCH_MAX}
local SLICE = ${LUA_UNPACK_SLICE}
local ERROR_TEXT_MAX = ${ERROR_TEXT_MAX}
local ERROR_STACK_MAX = ${ERROR_STACK_MAX}
local EVENT_ERROR_MAX = ${EVENT_ERROR_MAX_BYTES}
local BUILT_IN_MAX_ATTEMPTS = ${BUILT_IN_MAX_ATTEMPTS}

-- Every check comes before the first write (invariant 8): a refused argument raises here,
-- while nothing has been written yet, so a refused call changes nothing.
local function refuse(what)
  error({ err = 'EMQ_BAD_ARG ' .. what })
end

-- ARGV[i] as an integer in [min, max], or the call is refused.
local function int_arg(i, min, max)
  local v = tonumber(ARGV[i])
  if not v or v ~= math.floor(v) or v < min or v > max then
    refuse('ARGV[' .. i .. '] must be an integer from ' .. min .. ' to ' .. max)
  end
  return v
end

-- The count of a batch (1 .. BATCH_MAX), checked against the arguments actually sent.
local function batch_arg(i, first, per)
  local n = int_arg(i, 1, BATCH_MAX)
  if #ARGV ~= first - 1 + n * per then
    refuse('expected ' .. n .. ' groups of ' .. per .. ' arguments from ARGV[' .. first .. ']')
  end
  return n
end

-- Settings as field/value pairs from ARGV[first] on (n pairs), each field one of ranges
-- ({ field = { min, max } }) and given once; '' clears a field. Refuses before any write.
-- Returns the HSET list of the fields set, the fields cleared, and field -> value given.
local function setting_pairs(first, n, ranges, what)
  local sets, clears, given = {}, {}, {}
  for i = 0, n - 1 do
    local at = first + i * 2
    local field, value = ARGV[at], ARGV[at + 1]
    local range = ranges[field]
    if not range then refuse('ARGV[' .. at .. '] is not ' .. what) end
    if given[field] ~= nil then refuse('ARGV[' .. at .. '] repeats the field ' .. field) end
    if value == '' then
      clears[#clears + 1] = field
    else
      int_arg(at + 1, range[1], range[2])
      sets[#sets + 1] = field
      sets[#sets + 1] = value
    end
    given[field] = value
  end
  return sets, clears, given
end

-- Replay safety (invariant 9). KEYS[2] of a write script is its request's reply key; a
-- call that ran records its reply there for the replay window, and a repeat of the same
-- request (a resend after a lost reply, a retry) returns that reply and changes nothing.
local function replayed(key)
  return redis.call('GET', key)
end

local function record(key, text, ttl)
  redis.call('SET', key, text, 'PX', ttl)
end

-- A full Redis (maxmemory reached, noeviction) refuses a script's first write when that write
-- may grow memory, and no later one (it cannot stop a script half-way). A transition that moves
-- or frees jobs calls this before its first write, after every check and replay read: a DEL of
-- the fence (KEYS[1], which never exists) is a write that changes nothing, so a full Redis still
-- claims, completes, fails, extends, releases, drains, cleans and obliterates, while enqueue,
-- which only grows, is refused before its first write (docs/reliability.md, "A full Redis").
local function runs_when_full()
  redis.call('DEL', KEYS[1])
end

-- Per-claim answers (1 or 0) are recorded as one digit each ('1101'); appends them to out.
local function flags_from(text, out)
  for i = 1, #text do out[#out + 1] = tonumber(string.sub(text, i, i)) end
  return out
end

-- unpack() fails past about 8,000 values, so long lists reach Redis in slices.
local function each_slice(list, fn)
  for i = 1, #list, SLICE do
    fn(i, math.min(i + SLICE - 1, #list))
  end
end

-- ZADD key score id for many ids: two values per id, so half a slice of ids per call.
local function zadd_all(key, score, ids)
  local args = {}
  for j = 1, #ids do
    args[#args + 1] = score
    args[#args + 1] = ids[j]
    if #args >= SLICE or j == #ids then
      redis.call('ZADD', key, unpack(args))
      args = {}
    end
  end
end

local function zrem_all(key, ids)
  each_slice(ids, function(from, to) redis.call('ZREM', key, unpack(ids, from, to)) end)
end

local function del_all(keys)
  each_slice(keys, function(from, to) redis.call('DEL', unpack(keys, from, to)) end)
end

local function exists_any(keys)
  local n = 0
  each_slice(keys, function(from, to) n = n + redis.call('EXISTS', unpack(keys, from, to)) end)
  return n > 0
end

-- An error text as a row keeps it, and as an event carries it (events are capped by count,
-- not bytes, so each entry stays small).
local function row_error(text)
  return string.sub(text, 1, ERROR_TEXT_MAX)
end

local function event_error(text)
  if #text <= EVENT_ERROR_MAX then return text end
  return string.sub(text, 1, EVENT_ERROR_MAX) .. '...'
end

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
-- test checks the row's exact fields after every step.) Also returns the row's lane and
-- level fields ('l', 'y', nil when absent: see place()), read in the same HMGET, for the
-- transitions that count the job out of its lane or put it back into its lane's pending.
local function holds(row, token, claimant)
  local f = redis.call('HMGET', row, 'a', 'c', 'l', 'y')
  return f[1] == token and f[2] == claimant, f[3], f[4]
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
local WHOLE_PAST = 7000
-- (names built once: a number turned into a string costs more than the HSET argument it makes)
local CHUNK_NAMES = { 'd', 'd2', 'd3', 'd4' }
-- Appends the payload's fields to an HSET list: after fields[n] when n is given (a list
-- reused from job to job, whose length # does not tell), else after its last element.
-- Returns the list's new length.
local function put_data(fields, data, n)
  n = n or #fields
  local len = #data
  if len <= CHUNK or len > WHOLE_PAST then
    fields[n + 1], fields[n + 2] = 'd', data
    return n + 2
  end
  local count = math.ceil(len / CHUNK)
  for i = 1, count do
    fields[n + 1], fields[n + 2] = CHUNK_NAMES[i] or ('d' .. i), string.sub(data, (i - 1) * CHUNK + 1, i * CHUNK)
    n = n + 2
  end
  if count > READ_AHEAD then
    fields[n + 1], fields[n + 2] = 'dn', count
    n = n + 2
  end
  return n
end

-- HSET of a new row that holds its payload and nothing else, laid out as put_data does: most
-- enqueued jobs, so a payload of one or two chunks goes to Redis without an HSET list built
-- and unpacked for it (enqueue writes up to ENQUEUE_MANY_MAX rows per call).
local function put_row_data(row, data)
  local len = #data
  if len <= CHUNK or len > WHOLE_PAST then
    redis.call('HSET', row, 'd', data)
  elseif len <= 2 * CHUNK then
    redis.call('HSET', row, 'd', string.sub(data, 1, CHUNK), 'd2', string.sub(data, CHUNK + 1))
  else
    local fields = {}
    redis.call('HSET', row, unpack(fields, 1, put_data(fields, data, 0)))
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
    -- at most 7000 / 63 chunks (see put_data), far below unpack()'s limit
    parts[#parts + 1] = table.concat(redis.call('HMGET', row, unpack(names)))
  end
  return table.concat(parts)
end

-- Attempts spent in the current retry budget.
local function spent(row)
  local f = redis.call('HMGET', row, 'a', 'b')
  return (tonumber(f[1]) or 0) - (tonumber(f[2]) or 0)
end

-- The size of a job's retry budget, from its row's 'm' and 'w': the job's own when it was
-- enqueued with one (rows of earlier versions always were), else that of the worker that
-- claimed it last, so the reaper (which knows no processor's options) and fail decide alike.
local function budget(m, w)
  return tonumber(m) or tonumber(w) or BUILT_IN_MAX_ATTEMPTS
end
`;

/**
 * Composes a script: its documented header, then the shared helpers its body calls (and only
 * those: see shake.ts), then its body.
 */
export function luaScript(header: string, body: string): string {
  return `${header.trim()}\n${helpersFor(`${PRELUDE}\n${RETENTION_PRELUDE}\n${FLOW_PRELUDE}\n${JOB_ROW_PRELUDE}`, body)}\n${body.trim()}\n`;
}
