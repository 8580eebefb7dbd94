/**
 * Lua helpers for the reads across lanes (pending-reads.lua.ts, lane-reads.lua.ts): which
 * pending sets a queue has, found through the claim's own indexes, and id order in bytes.
 * They are appended to a read's body (after the prelude and FLOW_PRELUDE, whose names they use).
 */
export const PENDING_SETS_LUA = `
-- Every pending set the queue's indexes name, once each: the plain pending set (the default
-- lane at level 0, named even when empty: queues written before lanes have no index entry for
-- it), and each (level, lane) that is a member of ready:<level> or a digit of held[lane].
-- A non-empty set is in exactly one of the two (flow invariant), so each is found once; the
-- seen table only keeps a broken index from counting a set twice. only_level (a number, or
-- nil for all) keeps one level. Returns the sets as { level, lane, key } and the held hash as
-- read (a flat field/value list), which lane reads need too.
local function pending_sets(only_level)
  local sets, seen = {}, {}
  local function add(level, lane)
    if only_level and level ~= only_level then return end
    local key = pending_key(level, lane)
    if seen[key] then return end
    seen[key] = true
    sets[#sets + 1] = { level = level, lane = lane, key = key }
  end
  add(0, DEFAULT_LANE)
  for level = 0, TOP_LEVEL do
    if not only_level or level == only_level then
      for _, lane in ipairs(redis.call('ZRANGE', ready_key(level), 0, -1)) do add(level, lane) end
    end
  end
  local held = redis.call('HGETALL', K_HELD)
  for i = 1, #held, 2 do
    local levels = held[i + 1]
    for j = 1, #levels do add(tonumber(string.sub(levels, j, j)), held[i]) end
  end
  return sets, held
end

-- True when id a sorts after id b byte by byte (newer, for ids). Lua's own < compares with
-- the server's collation locale (Redis sets LC_COLLATE from its environment), which may put
-- 'a' before 'B'; ids sort by their bytes, as ZRANGE BYLEX does.
local function newer(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return #a > #b
end
`;
