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

/** Most pending sets one job-control call looks at (the lanes a walk visits per call). */
export const WALK_SETS_MAX = 200;

/**
 * A walk over every pending set, a bounded number per call, resumed from a cursor the caller
 * carries between calls (the job-control scripts: drain, clean, obliterate). Appended after
 * the prelude and FLOW_PRELUDE, whose names it uses. Cost per call: O(WALK_SETS_MAX) sets,
 * whatever the number of lanes.
 */
export const PENDING_WALK_LUA = `
-- The walk's cursor from ARGV[i]: 'p' starts at the plain pending set, 'r<level>:<rank>'
-- resumes in ready:<level> at that rank, 'h<cursor>' in held at that HSCAN cursor, '' is a
-- finished walk. Read among the checks, before any write.
local function walk_cursor_arg(i)
  local text = ARGV[i]
  if text == 'p' or text == '' then return { phase = text } end
  local level, rank = string.match(text or '', '^r(%d+):(%d+)$')
  if level and tonumber(level) <= TOP_LEVEL then
    return { phase = 'r', level = tonumber(level), rank = tonumber(rank) }
  end
  local scan = string.match(text or '', '^h(%d+)$')
  if scan then return { phase = 'h', scan = scan } end
  refuse('ARGV[' .. i .. '] must be a walk cursor (p, r<level>:<rank>, h<n> or empty)')
end

-- Visits pending sets from the cursor in a fixed order: the plain pending set (named even when
-- empty: queues written before lanes have no index entry for it), each lane of ready:0 ..
-- ready:TOP_LEVEL by rank, then each level of each lane in held (HSCAN). At most sets_max
-- sets per call. visit(level, lane, key) returns true when it is done with the set, false when
-- the call's budget ran out there (the walk stops and resumes at that set). after_held(lane),
-- if given, runs once every level of a held lane was visited. Returns the cursor to resume at,
-- or '' once every set was visited. A lane that leaves ready during the call (visit emptied
-- it) shifts the ranks behind it, so the rank carried on counts only the lanes still there.
-- Lanes that join or move in ready between calls (enqueues, claims) may be visited twice or
-- not at all in this walk; the callers document that a walk is not a snapshot.
local function walk_pending(cursor, sets_max, visit, after_held)
  local looked = 0
  local phase, level, rank = cursor.phase, cursor.level or 0, cursor.rank or 0
  if phase == '' then return '' end
  if phase == 'p' then
    looked = 1
    if not visit(0, DEFAULT_LANE, BASE .. 'pending') then return 'p' end
    phase, level, rank = 'r', 0, 0
  end
  if phase == 'r' then
    while level <= TOP_LEVEL do
      if looked >= sets_max then return 'r' .. level .. ':' .. rank end
      local key = ready_key(level)
      local lanes = redis.call('ZRANGE', key, rank, rank + sets_max - looked - 1)
      if #lanes == 0 then
        level, rank = level + 1, 0
      else
        for _, lane in ipairs(lanes) do
          -- (the default lane's level 0 is the plain pending set, visited first)
          if level > 0 or lane ~= DEFAULT_LANE then
            looked = looked + 1
            if not visit(level, lane, pending_key(level, lane)) then return 'r' .. level .. ':' .. rank end
          end
          if redis.call('ZSCORE', key, lane) then rank = rank + 1 end
        end
      end
    end
    phase = 'h'
  end
  local scan = cursor.scan or '0'
  repeat
    if looked >= sets_max then return 'h' .. scan end
    local page = redis.call('HSCAN', K_HELD, scan, 'COUNT', sets_max - looked)
    for i = 1, #page[2], 2 do
      local lane, levels = page[2][i], page[2][i + 1]
      for j = 1, #levels do
        local at = tonumber(string.sub(levels, j, j))
        if at > 0 or lane ~= DEFAULT_LANE then
          looked = looked + 1
          -- (the page is read again next call: the sets it finished cost one look each then)
          if not visit(at, lane, pending_key(at, lane)) then return 'h' .. scan end
        end
      end
      if after_held then after_held(lane) end
    end
    scan = page[1]
  until scan == '0'
  return ''
end
`;
