import { TRACE_CONTEXT_MAX_BYTES } from '../limits';
import { luaScript } from './prelude';

/**
 * A debounce key outlives its job's run-at by this much. Past the run-at the key no longer
 * matters (a due job is not replaced), so the margin only keeps the key from expiring
 * between the script's clock read and the run-at on a slow call.
 */
export const DEBOUNCE_KEY_MARGIN_MS = 1_000;

export const ENQUEUE_KEYED_LUA = luaScript(
  `
-- enqueue-keyed: one job with a debounce or throttle key.
--   debounce: (new) -> schedule at now + delay, its deadline (now + max wait, row 'dm') set
--             when the call gives a max wait; or, while the key's job waits in schedule for a
--             run-at still ahead and never ran, replaces that job's data (and name) and pushes
--             its run-at to now + delay, never past the deadline its creation set (a later
--             call's max wait neither lifts nor moves it).
--   throttle: (new) -> pending, or schedule when delayed, and the key holds the job for the
--             window; within the window the key's job is returned instead.
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] schedule   KEYS[4] metrics
-- KEYS[5] events   KEYS[6] wake   KEYS[7] the debounce or throttle key (emq:{q}:debounce:<k> /
-- emq:{q}:once:<k>)
-- ARGV[1] mode: debounce | throttle   ARGV[2] events max length   ARGV[3] replay window ms
-- ARGV[4] debounce delay ms / throttle window ms   ARGV[5] debounce max wait ms ('' none; used
-- when the call creates the job)
-- ARGV[6] the debounce key as given (kept on the row as 'dk'; '' for throttle)
-- ARGV[7] id   ARGV[8] data   ARGV[9] name   ARGV[10] 1 when the caller gave a name, else 0
-- ARGV[11] max attempts ('' none)   ARGV[12] delay ms (throttle; 0 none)
-- ARGV[13] run-at ms (throttle; 0 none)   ARGV[14] backoff policy JSON ('' none)
-- ARGV[15] lane ('' the default lane)   ARGV[16] priority level ('' 0)   ARGV[17] timeout ms ('' none)
-- ARGV[18] trace context ('' none; at most ${TRACE_CONTEXT_MAX_BYTES} bytes): kept as 'tc' on a created
-- job; a replaced job keeps the context of the enqueue that created it
-- Returns: { outcome, id }: created (the id given), replaced (debounce: the waiting job, whose
--          data and run-at changed), matched (throttle: the job of the window). A repeated
--          request returns its first reply.
-- Errors:  EMQ_EXISTS when the id given exists (nothing written).
-- Event:   'enqueued' with the created id; 'debounced' with the replaced id and its new runAt.
-- A full Redis (noeviction) refuses a created or replaced job before any write; a throttle
-- match, which writes only its reply record, goes through.
`,
  `
local mode = ARGV[1]
if mode ~= 'debounce' and mode ~= 'throttle' then refuse('ARGV[1] must be debounce or throttle') end
local maxlen = int_arg(2, 1, 1000000000)
local replay_ttl = int_arg(3, 1, 1000000000000)
local window = int_arg(4, 1, 1000000000000)
local max_wait = ARGV[5] ~= '' and int_arg(5, window, 1000000000000) or nil
local id, data, name, named = ARGV[7], ARGV[8], ARGV[9], ARGV[10] == '1'
if ARGV[11] ~= '' then int_arg(11, 1, 1000000) end
int_arg(12, 0, 1000000000000000)
int_arg(13, 0, 1000000000000000)
local backoff = ARGV[14]
if backoff ~= '' then check_backoff(14) end
if ARGV[15] ~= '' then check_lane(15) end
if ARGV[16] ~= '' then int_arg(16, 0, TOP_LEVEL) end
if ARGV[17] ~= '' then int_arg(17, 1, 604800000) end
local trace = ARGV[18] or ''
if #trace > ${TRACE_CONTEXT_MAX_BYTES} then
  refuse('ARGV[18] must be a trace context of at most ${TRACE_CONTEXT_MAX_BYTES} bytes')
end
if mode == 'debounce' and (ARGV[6] == '' or tonumber(ARGV[12]) ~= 0 or tonumber(ARGV[13]) ~= 0) then
  refuse('a debounce takes its key and no delay or run-at of its own')
end

local prior = replayed(KEYS[2])
if prior then
  local sep = string.find(prior, ' ', 1, true)
  return { string.sub(prior, 1, sep - 1), string.sub(prior, sep + 1) }
end
local function answer(outcome, job)
  record(KEYS[2], outcome .. ' ' .. job, replay_ttl)
  return { outcome, job }
end

-- Debounce hit: the waiting job takes the new data (and name) and the new run-at.
local function replace(job, deadline, f, now)
  local run_at = now + window
  if deadline then run_at = math.max(now, math.min(run_at, deadline)) end
  -- The old payload's chunks go (f: d2 d3 d4 dn), so none of it outlives the new one.
  local chunks = tonumber(f[4]) or (f[3] and 4 or f[2] and 3 or f[1] and 2 or 1)
  local stale = { 'dn' }
  for i = 2, chunks do stale[#stale + 1] = 'd' .. i end
  local fields = {}
  put_data(fields, data)
  if named and name ~= '' then
    fields[#fields + 1] = 'n'
    fields[#fields + 1] = name
  elseif named then
    stale[#stale + 1] = 'n'
  end
  local row = ROW_PREFIX .. job
  -- The key's SET first: it may grow memory, so a full Redis refuses the call here, having
  -- written nothing, as it refuses an enqueue; the HDEL before it would have let every write
  -- after it through (a full Redis refuses only a script's first write), the new payload too.
  redis.call('SET', KEYS[7], job, 'PX', run_at - now + ${DEBOUNCE_KEY_MARGIN_MS})
  redis.call('HDEL', row, unpack(stale))
  redis.call('HSET', row, unpack(fields))
  redis.call('ZADD', KEYS[3], run_at, job)
  redis.call('HINCRBY', KEYS[4], 'debounced', 1)
  emit(KEYS[5], maxlen, 'type', 'debounced', 'ids', job, 'runAt', run_at)
  wake(KEYS[6])
  return answer('replaced', job)
end

-- A new job, with the row fields of enqueue.lua.ts ('tc' included), plus 'dk' and 'df' for a
-- debounce (and 'dm' with a max wait).
local function create(now)
  local lane, level = place(ARGV[15] ~= '' and ARGV[15] or nil, ARGV[16])
  local fields = {}
  put_data(fields, data)
  -- Only a job's own settings go on its row; without them the serving worker's apply (claim).
  put_own(fields, name, ARGV[11], backoff, lane, level, ARGV[17])
  if trace ~= '' then
    fields[#fields + 1] = 'tc'
    fields[#fields + 1] = trace
  end
  local run_at, ttl = tonumber(ARGV[13]), window
  if mode == 'debounce' then
    run_at = now + window
    ttl = window + ${DEBOUNCE_KEY_MARGIN_MS}
    for _, v in ipairs({ 'dk', ARGV[6], 'df', now }) do fields[#fields + 1] = v end
    if max_wait then
      fields[#fields + 1] = 'dm'
      fields[#fields + 1] = now + max_wait
    end
  elseif run_at <= 0 and tonumber(ARGV[12]) > 0 then
    run_at = now + tonumber(ARGV[12])
  end
  redis.call('HSET', ROW_PREFIX .. id, unpack(fields))
  if run_at > now then
    redis.call('ZADD', KEYS[3], run_at, id)
  else
    into_pending(lane, level, { id })
  end
  redis.call('SET', KEYS[7], id, 'PX', ttl)
  redis.call('HINCRBY', KEYS[4], 'enqueued', 1)
  emit(KEYS[5], maxlen, 'type', 'enqueued', 'ids', id)
  wake(KEYS[6])
  return answer('created', id)
end

local now = now_ms()
local held = redis.call('GET', KEYS[7])
if held and mode == 'throttle' then
  -- A match creates nothing, so a full Redis lets it through: its reply record (kept for the
  -- replay window, so a repeat still matches once the window is over) is its only write.
  runs_when_full()
  return answer('matched', held)
end
if held then
  -- Only a job of this key still waiting for its run-at and never claimed is replaced: once
  -- due it counts as released (a worker may claim it at any moment).
  local score = tonumber(redis.call('ZSCORE', KEYS[3], held))
  local f = redis.call('HMGET', ROW_PREFIX .. held, 'a', 'dk', 'dm', 'd2', 'd3', 'd4', 'dn')
  if score and score > now and (tonumber(f[1]) or 0) == 0 and f[2] == ARGV[6] then
    return replace(held, tonumber(f[3]), { f[4], f[5], f[6], f[7] }, now)
  end
end
if redis.call('EXISTS', ROW_PREFIX .. id) == 1 then return redis.error_reply('EMQ_EXISTS ' .. id) end
return create(now)
`,
);
