import { PRIORITY_MAX } from '../../keyspace/lane-name';
import { CONTROL_CHUNK_MAX, CONTROL_LUA } from './control';
import { PENDING_SETS_LUA, PENDING_WALK_LUA, WALK_SETS_MAX } from './pending-sets';
import { luaScript } from './prelude';
import { CANCELS_MAX_LEN } from './remove.lua';

/**
 * The queue's keys that obliterate's last call deletes, as names under the queue's base (the
 * names keyspace.ts composes). Rows, idempotency keys and lanes' own keys go job by job or lane
 * by lane before; keys with a TTL of their own are left to expire (docs/job-control.md).
 */
export const OBLITERATED_KEYS = [
  'pending',
  ...Array.from({ length: PRIORITY_MAX + 1 }, (_, level) => `ready:${level}`),
  'vtime',
  'held',
  'lane-timers',
  'lane-holds',
  'lanes-paused',
  'lane-active',
  'lanes-configured',
  'flow',
  'settings',
  'rate',
  'hold',
  'waiting',
  'metrics',
  'events',
  'wake',
  'paused',
  'format',
  'schedulers',
  'scheduler-next',
] as const;

export const OBLITERATE_LUA = luaScript(
  `
-- obliterate: every job of the queue -> gone, then the queue's own keys, one bounded chunk per
-- call (call again until done). Every call first pauses the queue (no claim takes a job while
-- it goes) and deletes its schedulers (no new occurrence is made). Then up to n jobs: active
-- (force, or leases already expired: each is announced on the cancels stream, so the worker
-- running it aborts its handler, and counted out of its lane), pending along the walk over the
-- lanes' sets (at most ${WALK_SETS_MAX} sets a call; a held lane whose sets are empty leaves held and
-- the paused lanes, so held empties too), schedule, dead; their rows and idempotency keys (see
-- discard). Once the walk is done and no set or lane index holds anything: the lanes' own settings (n
-- per call), then the keys of OBLITERATED_KEYS, and the events stream begins again with a last
-- 'obliterated' event. The cancels stream is left to expire (workers may still be reading it).
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] active   KEYS[4] schedule
-- KEYS[5] dead   KEYS[6] paused   KEYS[7] events   KEYS[8] cancels   KEYS[9] wake
-- ARGV[1] 1 force (active jobs go too), 0 refuse while active holds an unexpired lease
-- ARGV[2] most jobs (or lanes) this call, 1 .. ${CONTROL_CHUNK_MAX}   ARGV[3] events max length
-- ARGV[4] replay window ms   ARGV[5] how long the cancels stream is kept, ms
-- ARGV[6] jobs removed by the earlier calls of this obliterate (for the last event)
-- ARGV[7] the walk's cursor: p for the first call, then the one the last call returned
-- Returns: { jobs removed by this call, 1 when the queue is gone else 0, the cursor for the
--          next call, 1 when this call began a new walk because jobs came in behind the last
--          one else 0 }; a repeated request returns its first reply.
-- Errors:  EMQ_QUEUE_BUSY <live leases> without force while active holds a lease not yet
--          expired (nothing written).
-- Event:   'obliterated' with the ids this call removed (none removed: no event); the last
--          call's also has done 1 and removed (the jobs of every call), in the new stream.
`,
  `${PENDING_SETS_LUA}${PENDING_WALK_LUA}${CONTROL_LUA}
local force = int_arg(1, 0, 1) == 1
local n = int_arg(2, 1, ${CONTROL_CHUNK_MAX})
local maxlen = int_arg(3, 1, 1000000000)
local replay_ttl = int_arg(4, 1, 1000000000000)
local cancels_ttl = int_arg(5, 1, 1000000000000)
local before = int_arg(6, 0, 1000000000000000)
local cursor = walk_cursor_arg(7)
local prior = replayed(KEYS[2])
if prior then
  local removed, done, next_cursor, again = string.match(prior, '^(%d+):(%d):(.*):(%d)$')
  return { tonumber(removed), tonumber(done), next_cursor, tonumber(again) }
end
local busy = redis.call('ZCARD', KEYS[3])
if busy > 0 and not force then
  -- A lease past its deadline belongs to no live worker (the reaper has not come by yet).
  local live = redis.call('ZCOUNT', KEYS[3], '(' .. now_ms(), '+inf')
  if live > 0 then return redis.error_reply('EMQ_QUEUE_BUSY ' .. live) end
end
-- Obliterating frees room, so a full Redis must let it run (this call's pause flag, events and
-- reply record cost far less than the jobs and keys it deletes).
runs_when_full()
redis.call('SET', KEYS[6], '1')
redis.call('UNLINK', BASE .. 'schedulers', BASE .. 'scheduler-next')

local removed, all = 0, {}
local function gone(ids)
  discard(ids)
  removed = removed + #ids
  for _, id in ipairs(ids) do all[#all + 1] = id end
end
if busy > 0 then
  local ids = redis.call('ZRANGE', KEYS[3], 0, n - 1)
  local out = leaving()
  for _, id in ipairs(ids) do
    local f = redis.call('HMGET', ROW_PREFIX .. id, 'a', 'l')
    out.add(f[2] or DEFAULT_LANE)
    emit(KEYS[8], ${CANCELS_MAX_LEN}, 'id', id, 'attempt', f[1] or '0')
  end
  zrem_all(KEYS[3], ids)
  out.settle(KEYS[9])
  gone(ids)
end
-- A held lane whose sets this walk emptied leaves held (and the paused lanes, which would
-- otherwise name a lane that is in neither ready nor held): held then empties as the walk goes,
-- so one EXISTS below tells whether any pending set is left.
local function unhold(lane)
  local levels = redis.call('HGET', K_HELD, lane)
  if levels == '' then
    redis.call('HDEL', K_HELD, lane)
    redis.call('SREM', K_PAUSED, lane)
  end
end
local next_cursor = ARGV[7]
if removed < n then
  local ids
  ids, next_cursor = take_pending(cursor, ${WALK_SETS_MAX}, n - removed, nil, unhold)
  gone(ids)
end
for _, set in ipairs({ KEYS[4], KEYS[5] }) do
  if removed < n then
    local ids = redis.call('ZRANGE', set, 0, n - removed - 1)
    zrem_all(set, ids)
    gone(ids)
  end
end
local pending_indexes = { BASE .. 'pending', K_HELD }
for level = 0, TOP_LEVEL do pending_indexes[#pending_indexes + 1] = ready_key(level) end
local done, again = 0, 0
if next_cursor == '' and redis.call('EXISTS', unpack(pending_indexes)) > 0 then
  -- The walk saw every set, yet pending jobs are left: they came in behind it. A new walk.
  next_cursor, again = 'p', 1
end
if next_cursor == '' and removed < n and redis.call('EXISTS', KEYS[3], KEYS[4], KEYS[5]) == 0 then
  local lanes = redis.call('SPOP', K_CONFIGURED, n - removed)
  for _, lane in ipairs(lanes) do
    redis.call('UNLINK', BASE .. 'lane:' .. lane, lane_rate_key(lane))
  end
  if redis.call('EXISTS', K_CONFIGURED) == 0 then
    local names = {}
    for _, name in ipairs({ ${OBLITERATED_KEYS.map((name) => `'${name}'`).join(', ')} }) do
      names[#names + 1] = BASE .. name
    end
    redis.call('UNLINK', unpack(names))
    if redis.call('EXISTS', KEYS[8]) == 1 then redis.call('PEXPIRE', KEYS[8], cancels_ttl) end
    done = 1
  end
end
-- The last call's event goes into the new stream, so it also carries that call's ids.
if done == 1 then
  emit(KEYS[7], maxlen, 'type', 'obliterated', 'ids', table.concat(all, ','), 'done', '1', 'removed', before + removed)
elseif removed > 0 then
  emit(KEYS[7], maxlen, 'type', 'obliterated', 'ids', table.concat(all, ','))
end
record(KEYS[2], removed .. ':' .. done .. ':' .. next_cursor .. ':' .. again, replay_ttl)
return { removed, done, next_cursor, again }
`,
);
