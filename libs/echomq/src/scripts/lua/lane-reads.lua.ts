import { PENDING_SETS_LUA } from './pending-sets';
import { luaScript } from './prelude';

/** A read, not a transition: one script so every lane's sets and counters are seen at one instant. */
export const READ_LANES_LUA = luaScript(
  `
-- read lanes (read only): every lane the queue's flow structures name, with its state.
-- KEYS[1] fence (the base of every other key)
-- The lanes: members of each ready:<level>, fields of held and of lane-active, members of
-- lanes-paused and of lanes-configured (the lanes with settings of their own, kept by
-- set-lane). The default lane is named by the plain pending set only while that holds jobs.
-- Returns: per lane, in first-seen order, { lane, pending (ZCARD summed over its sets at the
--          levels ready or held name), active (lane-active), paused 1|0, held 1|0, weight
--          (lane:<lane> w, else 1), concurrency (lane:<lane> k, else settings lc, else '') }.
--          O(lanes with work) calls, no writes.
`,
  `${PENDING_SETS_LUA}
local sets, held = pending_sets(nil)
local views, names = {}, {}
local function view(lane)
  local v = views[lane]
  if not v then
    v = { pending = 0, active = 0, paused = 0, held = 0 }
    views[lane] = v
    names[#names + 1] = lane
  end
  return v
end

for _, set in ipairs(sets) do
  local n = redis.call('ZCARD', set.key)
  if n > 0 or set.level ~= 0 or set.lane ~= DEFAULT_LANE then
    local v = view(set.lane)
    v.pending = v.pending + n
  end
end
for i = 1, #held, 2 do view(held[i]).held = 1 end
local active = redis.call('HGETALL', K_LANE_ACTIVE)
local others = 0
for i = 1, #active, 2 do
  view(active[i]).active = tonumber(active[i + 1])
  others = others + tonumber(active[i + 1])
end
if not flow_on() then
  -- Without the flow mark the default lane's active jobs are not counted: they are the rest.
  local default_active = redis.call('ZCARD', BASE .. 'active') - others
  if default_active > 0 then view(DEFAULT_LANE).active = default_active end
end
for _, lane in ipairs(redis.call('SMEMBERS', K_PAUSED)) do view(lane).paused = 1 end
for _, lane in ipairs(redis.call('SMEMBERS', K_CONFIGURED)) do view(lane) end

local out = {}
for _, lane in ipairs(names) do
  local v = views[lane]
  local weight, cap = lane_rules(lane)
  out[#out + 1] = { lane, v.pending, v.active, v.paused, v.held, weight, cap or '' }
end
return out
`,
);
