import { PENDING_SETS_LUA } from './pending-sets';
import { luaScript } from './prelude';

/**
 * Most ids one pending browse returns (the queue's BROWSE_MAX; a spec keeps the two equal).
 * It bounds the merge's work, so the script checks it too.
 */
export const PENDING_BROWSE_MAX = 1000;

/** Reads, not transitions: one script each so every lane's set is seen at one instant. */
export const COUNT_PENDING_LUA = luaScript(
  `
-- count states (read only): the jobs in every lane's pending set at every level, and the
-- depths of active, schedule and dead, all at one instant (a job moving is counted once).
-- KEYS[1] fence (the base of every other key)
-- Returns: { pending: the sum of ZCARD over the plain pending set and each (level, lane) set
--          named by ready:<level> or held (see pending_sets), active, schedule, dead };
--          O(lanes with work) calls, no writes.
`,
  `${PENDING_SETS_LUA}
local total = 0
for _, set in ipairs(pending_sets(nil)) do
  total = total + redis.call('ZCARD', set.key)
end
return {
  total,
  redis.call('ZCARD', BASE .. 'active'),
  redis.call('ZCARD', BASE .. 'schedule'),
  redis.call('ZCARD', BASE .. 'dead'),
}
`,
);

export const BROWSE_PENDING_LUA = luaScript(
  `
-- browse pending (read only): pending ids newest first (by id bytes, which are mint order).
-- KEYS[1] fence (the base of every other key)
-- ARGV[1] lane ('' every lane)   ARGV[2] priority level ('' every level)
-- ARGV[3] limit 1 .. ${PENDING_BROWSE_MAX}   ARGV[4] after: continue below this id, exclusive ('' from the newest)
-- The sets read: with a lane and a level, that one set; with a lane, its set at each level;
-- without a lane, every set pending_sets names (at the level, when one is given).
-- Returns: at most limit ids. One set is one ZRANGE BYLEX REV; more are merged: one ZRANGE
--          per set to start, then a refill only from the set whose last fetched id was
--          taken (twice as many each time, never more than still wanted), so the cost is
--          O(sets + limit) calls and at most about sets + 2 * limit ids fetched. No writes.
`,
  `${PENDING_SETS_LUA}
local lane = ARGV[1]
if lane ~= '' and (#lane > 64 or not string.match(lane, '^[A-Za-z0-9_.:@+=%-]+$')) then
  refuse('ARGV[1] must be a lane name (1 to 64 of A-Z a-z 0-9 _ . : @ + = -) or empty')
end
local level = nil
if ARGV[2] ~= '' then level = int_arg(2, 0, TOP_LEVEL) end
local limit = int_arg(3, 1, ${PENDING_BROWSE_MAX})
local from = ARGV[4] == '' and '+' or '(' .. ARGV[4]

local keys = {}
if lane == '' then
  for _, set in ipairs(pending_sets(level)) do keys[#keys + 1] = set.key end
elseif level then
  keys[1] = pending_key(level, lane)
else
  for l = 0, TOP_LEVEL do keys[#keys + 1] = pending_key(l, lane) end
end

local function range(key, below, n)
  return redis.call('ZRANGE', key, below, '-', 'BYLEX', 'REV', 'LIMIT', 0, n)
end
if #keys == 1 then return range(keys[1], from, limit) end

-- A max-heap of runs (the ids fetched from one set, not yet taken), by their next id.
local heap = {}
local function above(i, j)
  return newer(heap[i].ids[heap[i].at], heap[j].ids[heap[j].at])
end
local function sift_up(i)
  while i > 1 and above(i, math.floor(i / 2)) do
    local p = math.floor(i / 2)
    heap[i], heap[p] = heap[p], heap[i]
    i = p
  end
end
local function sift_down(i)
  while true do
    local top, l, r = i, 2 * i, 2 * i + 1
    if l <= #heap and above(l, top) then top = l end
    if r <= #heap and above(r, top) then top = r end
    if top == i then return end
    heap[i], heap[top] = heap[top], heap[i]
    i = top
  end
end

local first = math.max(1, math.floor(limit / #keys))
for _, key in ipairs(keys) do
  local ids = range(key, from, first)
  if #ids > 0 then
    heap[#heap + 1] = { key = key, ids = ids, at = 1, asked = first }
    sift_up(#heap)
  end
end

local out = {}
while #out < limit and #heap > 0 do
  local run = heap[1]
  local id = run.ids[run.at]
  out[#out + 1] = id
  run.at = run.at + 1
  -- A run that got all it asked for may have more: refill it from below its last id.
  if run.at > #run.ids and #run.ids == run.asked and #out < limit then
    run.asked = math.min(2 * run.asked, limit - #out)
    run.ids, run.at = range(run.key, '(' .. id, run.asked), 1
  end
  if run.at > #run.ids then
    heap[1] = heap[#heap]
    heap[#heap] = nil
  end
  if #heap > 0 then sift_down(1) end
end
return out
`,
);
