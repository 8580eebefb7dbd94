import { luaScript } from './prelude';

export const UPDATE_JOB_LUA = luaScript(
  `
-- update job: rewrites a job that is not active (pending, schedule or dead): its data, its
-- run-at, its lane and priority level. A run-at ahead of the server clock puts a pending job in
-- schedule (a scheduled one gets the new run-at); one at or before it makes the job pending
-- now. A new lane or level moves a pending job between its lanes' pending sets (the old lane
-- leaves ready / held when it has no work left there; the new one is offered: see flow.ts);
-- of a scheduled or dead job only the row's 'l' / 'y' change, which promote and retry read.
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] active   KEYS[4] schedule
-- KEYS[5] dead   KEYS[6] metrics   KEYS[7] events   KEYS[8] wake   KEYS[9] row emq:{q}:job:<id>
-- ARGV[1] id   ARGV[2] data as JSON ('' keep)   ARGV[3] run-at ms since epoch ('' none)
-- ARGV[4] delay ms from now ('' none; run-at wins)   ARGV[5] lane ('' keep)
-- ARGV[6] priority level 0-9 ('' keep)   ARGV[7] events max length   ARGV[8] replay window ms
-- Returns: the state the job is in afterwards: pending | schedule | dead; a repeated request
--          returns the same.
-- Errors:  EMQ_NOT_FOUND when there is no such job; EMQ_ACTIVE while it is active;
--          EMQ_FINISHED when it is in no set (completed); EMQ_DEAD_RUN_AT for a run-at of a dead job;
--          EMQ_OCCURRENCE_RUN_AT for a run-at of a schedule's occurrence (row field sk): its
--          schedule owns its timing, and moving a promoted one back to schedule could leave two
--          unstarted occurrences of one schedule (upsert may have made the next one meanwhile).
-- Event:   'updated' with the id, state (afterwards) and fields (what changed: data, runAt, lane, priority).
`,
  `
local id, data = ARGV[1], ARGV[2]
local run_at = ARGV[3] ~= '' and int_arg(3, 0, 1000000000000000) or nil
local delay = ARGV[4] ~= '' and int_arg(4, 0, 1000000000000000) or nil
local new_lane = ARGV[5] ~= '' and ARGV[5] or nil
if new_lane and (#new_lane > 64 or not string.find(new_lane, '^[%w_.:@+=-]+$')) then
  refuse('ARGV[5] must be a lane name (1 to 64 of A-Z a-z 0-9 _ . : @ + = -) or empty')
end
local new_level = ARGV[6] ~= '' and int_arg(6, 0, TOP_LEVEL) or nil
local maxlen = int_arg(7, 1, 1000000000)
local replay_ttl = int_arg(8, 1, 1000000000000)
local prior = replayed(KEYS[2])
if prior then
  return prior
end
local f = redis.call('HMGET', KEYS[9], 'l', 'y', 'dn', 'sk')
local lane, level = place(f[1], f[2])
local state = nil
if redis.call('ZSCORE', pending_key(level, lane), id) then
  state = 'pending'
elseif redis.call('ZSCORE', KEYS[4], id) then
  state = 'schedule'
elseif redis.call('ZSCORE', KEYS[5], id) then
  state = 'dead'
elseif redis.call('ZSCORE', KEYS[3], id) then
  return redis.error_reply('EMQ_ACTIVE')
elseif redis.call('EXISTS', KEYS[9]) == 1 then
  return redis.error_reply('EMQ_FINISHED')
else
  return redis.error_reply('EMQ_NOT_FOUND')
end
local timed = run_at ~= nil or delay ~= nil
if timed and state == 'dead' then
  return redis.error_reply('EMQ_DEAD_RUN_AT')
end
if timed and f[4] then
  return redis.error_reply('EMQ_OCCURRENCE_RUN_AT')
end

local changed = {}
local now = now_ms()
local at = run_at or (delay and now + delay)
local target = state
if timed then
  target = at > now and 'schedule' or 'pending'
  changed[#changed + 1] = 'runAt'
end
if data ~= '' then
  -- The new payload's chunks first ('d', 'd2' .., 'dn': see put_data), then the old ones it did
  -- not overwrite go. In this order because the HSET may grow memory: a full Redis refuses the
  -- call there, having written nothing; an HDEL first would have let every write after it
  -- through (a full Redis refuses only a script's first write), the new payload too.
  local fields = {}
  put_data(fields, data)
  redis.call('HSET', KEYS[9], unpack(fields))
  local written = {}
  for i = 1, #fields, 2 do written[fields[i]] = true end
  local old = {}
  if not written.dn then old[1] = 'dn' end
  for i = 2, math.max(READ_AHEAD, tonumber(f[3]) or 0) do
    if not written['d' .. i] then old[#old + 1] = 'd' .. i end
  end
  if #old > 0 then redis.call('HDEL', KEYS[9], unpack(old)) end
  changed[#changed + 1] = 'data'
end
local to_lane, to_level = new_lane or lane, new_level or level
local moved = to_lane ~= lane or to_level ~= level
if moved then
  if to_lane == DEFAULT_LANE then redis.call('HDEL', KEYS[9], 'l') else redis.call('HSET', KEYS[9], 'l', to_lane) end
  if to_level == 0 then redis.call('HDEL', KEYS[9], 'y') else redis.call('HSET', KEYS[9], 'y', to_level) end
  if to_lane ~= lane then changed[#changed + 1] = 'lane' end
  if to_level ~= level then changed[#changed + 1] = 'priority' end
end
if state == 'pending' and (target ~= 'pending' or moved) then
  redis.call('ZREM', pending_key(level, lane), id)
  drained(lane, level)
end
if target == 'pending' and (state ~= 'pending' or moved) then
  if state == 'schedule' then redis.call('ZREM', KEYS[4], id) end
  into_pending(to_lane, to_level, { id })
  wake(KEYS[8])
elseif target == 'schedule' and timed then
  redis.call('ZADD', KEYS[4], at, id)
  -- A worker blocked until the next run-at shortens its wait to this one.
  wake(KEYS[8])
end
redis.call('HINCRBY', KEYS[6], 'updated', 1)
emit(KEYS[7], maxlen, 'type', 'updated', 'ids', id, 'state', target, 'fields', table.concat(changed, ','))
record(KEYS[2], target, replay_ttl)
return target
`,
);
