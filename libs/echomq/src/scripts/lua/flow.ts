/**
 * Lua helpers for flow control (lanes, priority levels, caps, rate windows), prepended to
 * every transition after the prelude (docs/flow-control.md explains the scheduling).
 *
 * The key names are the keyspace module's (keyspace/keyspace.ts), composed from the queue's
 * base: every script declares `<base>fence` as KEYS[1], so the base is KEYS[1] less 'fence'.
 * A unit test checks that these names equal QueueKeys' for the same lane and level.
 */
import { DEFAULT_LANE, PRIORITY_MAX } from '../../keyspace/lane-name';

/** A rate window is counted in slices of a twentieth of it (at least 1 ms each). */
export const RATE_SLICES = 20;

/**
 * Most lanes one claim call holds back (at their cap or rate limit) before it stops walking
 * and passes the wake token on: a cap lowered under thousands of busy lanes costs several
 * bounded calls, not one long one.
 */
export const CLAIM_HOLDS_MAX = 100;

export const FLOW_PRELUDE = `
local BASE = string.sub(KEYS[1], 1, #KEYS[1] - 5)
local ROW_PREFIX = BASE .. 'job:'
local DEFAULT_LANE = '${DEFAULT_LANE}'
local TOP_LEVEL = ${PRIORITY_MAX}
local RATE_SLICES = ${RATE_SLICES}
local K_VTIME, K_HELD, K_TIMERS = BASE .. 'vtime', BASE .. 'held', BASE .. 'lane-timers'
local K_HOLDS, K_CONFIGURED, K_FLOW = BASE .. 'lane-holds', BASE .. 'lanes-configured', BASE .. 'flow'
local CLAIM_HOLDS_MAX = ${CLAIM_HOLDS_MAX}
local K_PAUSED, K_LANE_ACTIVE = BASE .. 'lanes-paused', BASE .. 'lane-active'
local K_SETTINGS, K_RATE, K_HOLD, K_WAITING = BASE .. 'settings', BASE .. 'rate', BASE .. 'hold', BASE .. 'waiting'

-- The pending set of a lane at a level; the default lane's level 0 is the plain pending set.
local function pending_key(level, lane)
  if level == 0 and lane == DEFAULT_LANE then return BASE .. 'pending' end
  return BASE .. 'pending:' .. level .. ':' .. lane
end

local function ready_key(level)
  return BASE .. 'ready:' .. level
end

local function lane_rate_key(lane)
  return BASE .. 'lane-rate:' .. lane
end

-- A row's lane and level from its 'l' and 'y' fields (absent: the default lane, level 0).
local function place(l, y)
  return l or DEFAULT_LANE, tonumber(y) or 0
end

local function has_level(levels, level)
  return string.find(levels, tostring(level), 1, true) ~= nil
end

-- The queue's limits (hash fields rm rw gc lc lm lw, as numbers), read once per call.
local settings_read = nil
local function settings()
  if not settings_read then
    settings_read = {}
    local raw = redis.call('HGETALL', K_SETTINGS)
    for i = 1, #raw, 2 do settings_read[raw[i]] = tonumber(raw[i + 1]) end
  end
  return settings_read
end

-- A lane's weight (default 1) and cap (its own, else the queue's laneConcurrency, else nil).
local function lane_rules(lane)
  local f = redis.call('HMGET', BASE .. 'lane:' .. lane, 'w', 'k')
  return tonumber(f[1]) or 1, tonumber(f[2]) or settings().lc
end

local function lane_active(lane)
  return tonumber(redis.call('HGET', K_LANE_ACTIVE, lane)) or 0
end

-- Rate windows: starts are counted per slice of g ms (window / RATE_SLICES, at least 1). A
-- slice stays counted while any instant of it lies within the last window, so any
-- window-long span, wherever it starts, holds at most max starts; the price is that a
-- window admits max per (window + g) at worst under steady demand.
local function rate_slice(window)
  return math.max(1, math.floor(window / RATE_SLICES))
end

-- Room left for starts now, and when there is none, the server ms at which there is.
-- Drops slices that no longer count, and slices past the current one: counted under another
-- window (an admin changed it, so the slice size changed) they would mean nothing here.
local function window_room(key, max, window, now)
  local g = rate_slice(window)
  local span = math.ceil(window / g)
  local current = math.floor(now / g)
  local oldest = current - span
  local raw = redis.call('HGETALL', key)
  local live, stale, total = {}, {}, 0
  for i = 1, #raw, 2 do
    local slice, count = tonumber(raw[i]), tonumber(raw[i + 1])
    if slice < oldest or slice > current then
      stale[#stale + 1] = raw[i]
    else
      live[#live + 1] = { slice, count }
      total = total + count
    end
  end
  if #stale > 0 then redis.call('HDEL', key, unpack(stale)) end
  if total < max then return max - total, 0 end
  table.sort(live, function(a, b) return a[1] < b[1] end)
  for _, s in ipairs(live) do
    total = total - s[2]
    if total < max then return 0, (s[1] + span + 1) * g end
  end
  return 0, now + window
end

local function count_starts(key, n, window, now)
  local g = rate_slice(window)
  redis.call('HINCRBY', key, math.floor(now / g), n)
  redis.call('PEXPIRE', key, window + 2 * g)
end

-- Work arrived in (lane, level)'s pending set: the lane joins ready at the level's virtual
-- time (so it is served within one round), or, while it is held back, the level is noted
-- for its return.
-- The flow mark: set once the queue uses flow control beyond plain lanes (limits, lane
-- settings or pauses, throttles, priorities above 0), for good. Without it a claim skips every
-- read that could only find nothing, and the default lane's active jobs go uncounted (no cap
-- can apply to them yet); the call that sets it counts them from the active set: every active
-- job not counted in another lane is the default lane's.
local flow_mark = nil
local function flow_on()
  if flow_mark == nil then flow_mark = redis.call('EXISTS', K_FLOW) == 1 end
  return flow_mark
end

local function flow_in_use()
  if flow_on() then return end
  -- Reads first, then the writes: a script that fails part-way is not undone by Redis.
  local others = 0
  local counts = redis.call('HGETALL', K_LANE_ACTIVE)
  for i = 2, #counts, 2 do others = others + tonumber(counts[i]) end
  local default_active = redis.call('ZCARD', BASE .. 'active') - others
  if default_active > 0 then redis.call('HSET', K_LANE_ACTIVE, DEFAULT_LANE, default_active) end
  redis.call('SET', K_FLOW, '1')
  flow_mark = true
end

-- Whether a lane's jobs in active are counted in lane-active.
local function counted(lane)
  return lane ~= DEFAULT_LANE or flow_on()
end

local function offer(lane, level)
  if level > 0 then flow_in_use() end
  local held = redis.call('HGET', K_HELD, lane)
  if held then
    if not has_level(held, level) then redis.call('HSET', K_HELD, lane, held .. level) end
    return
  end
  redis.call('ZADD', ready_key(level), 'NX', redis.call('HGET', K_VTIME, level) or 0, lane)
end

local function into_pending(lane, level, ids)
  if #ids == 0 then return end
  zadd_all(pending_key(level, lane), 0, ids)
  offer(lane, level)
end

-- Jobs back into pending by their rows' lanes and levels: one ZADD per lane and level.
local function pend_by_row(ids)
  local groups, order = {}, {}
  for _, id in ipairs(ids) do
    local f = redis.call('HMGET', ROW_PREFIX .. id, 'l', 'y')
    local lane, level = place(f[1], f[2])
    local at = level .. ':' .. lane
    local group = groups[at]
    if not group then
      group = { lane = lane, level = level, ids = {} }
      groups[at] = group
      order[#order + 1] = at
    end
    group.ids[#group.ids + 1] = id
  end
  for _, at in ipairs(order) do into_pending(groups[at].lane, groups[at].level, groups[at].ids) end
end

-- A job left (lane, level)'s pending set other than by a claim: a lane with no work left
-- there leaves ready at that level (or its held levels).
local function drained(lane, level)
  if redis.call('EXISTS', pending_key(level, lane)) == 1 then return end
  redis.call('ZREM', ready_key(level), lane)
  local held = redis.call('HGET', K_HELD, lane)
  if held and has_level(held, level) then
    redis.call('HSET', K_HELD, lane, (string.gsub(held, tostring(level), '')))
  end
end

-- Takes a lane out of ready at every level (pause, a lane-scoped hold) and notes the levels.
local function hold_lane(lane)
  local levels = redis.call('HGET', K_HELD, lane) or ''
  for level = 0, TOP_LEVEL do
    if redis.call('ZREM', ready_key(level), lane) == 1 and not has_level(levels, level) then
      levels = levels .. level
    end
  end
  redis.call('HSET', K_HELD, lane, levels)
end

-- Whether any level has a lane ready to claim.
local function any_ready()
  local keys = {}
  for level = 0, TOP_LEVEL do keys[#keys + 1] = ready_key(level) end
  return redis.call('EXISTS', unpack(keys)) > 0
end

-- A held lane returns to ready at every level where it has work once nothing holds it: not
-- paused, no rate timer, no throttle hold, under its cap. True when it returned with work
-- (wake a worker).
local function try_restore(lane)
  local levels = redis.call('HGET', K_HELD, lane)
  if not levels then return false end
  if redis.call('SISMEMBER', K_PAUSED, lane) == 1 or redis.call('ZSCORE', K_TIMERS, lane)
      or redis.call('ZSCORE', K_HOLDS, lane) then
    return false
  end
  local _, cap = lane_rules(lane)
  if cap and lane_active(lane) >= cap then return false end
  redis.call('HDEL', K_HELD, lane)
  local any = false
  for i = 1, #levels do
    local level = tonumber(string.sub(levels, i, i))
    if redis.call('EXISTS', pending_key(level, lane)) == 1 then
      redis.call('ZADD', ready_key(level), 'NX', redis.call('HGET', K_VTIME, level) or 0, lane)
      any = true
    end
  end
  return any
end

-- Jobs put in the plain pending set by a version from before lanes (a rolling upgrade)
-- have no ready entry: the default lane is offered for them. The claim does this when it
-- finds level 0 with nothing ready, and promote (every reaper pass) does it always, so such
-- jobs wait at most one reaper interval even while other lanes are busy. True when offered.
local function adopt_plain_pending()
  if redis.call('EXISTS', BASE .. 'pending') == 0 or redis.call('ZSCORE', ready_key(0), DEFAULT_LANE)
      or redis.call('HEXISTS', K_HELD, DEFAULT_LANE) == 1 then
    return false
  end
  redis.call('ZADD', ready_key(0), redis.call('HGET', K_VTIME, 0) or 0, DEFAULT_LANE)
  return true
end

-- Lane timers and throttle holds that are due: each lane may run again (if nothing else
-- holds it).
local function lanes_due(now)
  local restored = false
  for _, key in ipairs({ K_TIMERS, K_HOLDS }) do
    for _, lane in ipairs(redis.call('ZRANGEBYSCORE', key, '-inf', now, 'LIMIT', 0, BATCH_MAX)) do
      redis.call('ZREM', key, lane)
      if try_restore(lane) then restored = true end
    end
  end
  return restored
end

-- Counts jobs leaving active, per lane: lanes[i] = { lane, n } in first-seen order.
local function leaving()
  local by_lane, order = {}, {}
  return {
    add = function(lane)
      if not by_lane[lane] then
        by_lane[lane] = 0
        order[#order + 1] = lane
      end
      by_lane[lane] = by_lane[lane] + 1
    end,
    -- Counts them out of lane-active, returns the lanes their cap held, and wakes a worker
    -- when a cap held one back or a lane returned.
    settle = function(wake_key)
      local restored = false
      for _, lane in ipairs(order) do
        if counted(lane) and redis.call('HINCRBY', K_LANE_ACTIVE, lane, -by_lane[lane]) <= 0 then
          redis.call('HDEL', K_LANE_ACTIVE, lane)
        end
        -- (without the flow mark nothing is held and no claim waits for a slot)
        if flow_on() and try_restore(lane) then restored = true end
      end
      if #order > 0 and flow_on() and (redis.call('DEL', K_WAITING) == 1 or restored) then wake(wake_key) end
    end,
  }
end

-- schedule -> pending for due jobs (at most limit), each into its lane at its level.
local function promote_due(schedule, limit, now)
  local due = redis.call('ZRANGEBYSCORE', schedule, '-inf', now, 'LIMIT', 0, limit)
  if #due > 0 then
    zrem_all(schedule, due)
    pend_by_row(due)
  end
  return due
end
`;
