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
 * Most walks one drain, clean (pending) or obliterate makes: a walk that ends while work may be
 * left behind it (a lane joined or moved behind the cursor) begins another, up to this many.
 */
export const WALKS_MAX = 10;

/**
 * A walk over every pending set, a bounded number per call, resumed from a cursor the caller
 * carries between calls (the job-control scripts: drain, clean, obliterate). Appended after
 * the prelude and FLOW_PRELUDE, whose names it uses. Cost per call: O(WALK_SETS_MAX) sets and
 * held lanes, whatever the number of lanes.
 */
export const PENDING_WALK_LUA = `
-- The walk's cursor from ARGV[i]. Its position: 'p' starts at the plain pending set;
-- 'r<level>' at the start of ready:<level>; 'r<level>:<score>:<lane>' in ready:<level> at that
-- lane (a position, not a rank: lanes that leave or move ahead of it shift nothing); 'h<scan>'
-- in held at that HSCAN cursor; 'h<scan>:<level>:<lane>' in that HSCAN page at that lane's
-- level; '' is a finished walk. It may follow 'w<walk>:<took>:<held>:' (drain and clean: the
-- number of this walk, 1 once it removed a job, and the size of held when it began; a walk
-- without them is walk 1 beginning now). Read among the checks, before any write.
local function walk_cursor_arg(i)
  local text = ARGV[i] or ''
  local walk, took, held_size, rest = string.match(text, '^w(%d+):([01]):(%d+):(.*)$')
  if walk then text = rest end
  local cursor
  if text == 'p' or text == '' then cursor = { phase = text } end
  local level = string.match(text, '^r(%d+)$')
  if level then cursor = { phase = 'r', level = tonumber(level) } end
  local at_level, score, lane = string.match(text, '^r(%d+):([^:]+):(.+)$')
  if at_level and tonumber(score) then
    cursor = { phase = 'r', level = tonumber(at_level), score = score, lane = lane }
  end
  local scan = string.match(text, '^h(%d+)$')
  if scan then cursor = { phase = 'h', scan = scan } end
  local in_scan, digit, held_lane = string.match(text, '^h(%d+):(%d):(.+)$')
  if in_scan then cursor = { phase = 'h', scan = in_scan, digit = digit, lane = held_lane } end
  if not cursor or (cursor.level and cursor.level > TOP_LEVEL) then
    refuse('ARGV[' .. i .. '] must be a walk cursor (p, r<level>[:<score>:<lane>], h<n>[:<level>:<lane>] or empty)')
  end
  cursor.walk, cursor.took = tonumber(walk or '1'), took == '1'
  cursor.held_size = tonumber(held_size) or redis.call('HLEN', K_HELD)
  return cursor
end

-- Where a walk resumes in ready:<level> (key): at the lane it stopped at while that lane is
-- still there with the same score; else at the first lane of that score, revisiting ties but
-- skipping none (a lane's score only grows while it stays in ready).
local function ready_rank(key, score, lane)
  if not lane then return 0 end
  if redis.call('ZSCORE', key, lane) == score then return redis.call('ZRANK', key, lane) end
  return redis.call('ZCOUNT', key, '-inf', '(' .. score)
end

-- The position of the lane at rank in ready:<level>, or of the next level (held after the last).
local function ready_position(level, rank)
  local next_lane = redis.call('ZRANGE', ready_key(level), rank, rank, 'WITHSCORES')
  if #next_lane > 0 then return 'r' .. level .. ':' .. next_lane[2] .. ':' .. next_lane[1] end
  if level < TOP_LEVEL then return 'r' .. (level + 1) end
  return 'h0'
end

-- The ready phase from cursor: each lane of ready:<level> .. ready:TOP_LEVEL in order. Returns
-- the number of sets looked at, and the position to resume at (nil once the phase is done).
local function walk_ready(cursor, looked, sets_max, visit)
  local level, score, lane = cursor.level or 0, cursor.score, cursor.lane
  while level <= TOP_LEVEL do
    local key = ready_key(level)
    local rank = ready_rank(key, score, lane)
    score, lane = nil, nil
    repeat
      if looked >= sets_max then return looked, ready_position(level, rank) end
      local page = redis.call('ZRANGE', key, rank, rank + sets_max - looked - 1, 'WITHSCORES')
      for i = 1, #page, 2 do
        local at, at_score = page[i], page[i + 1]
        -- (the default lane's level 0 is the plain pending set, visited first)
        if level > 0 or at ~= DEFAULT_LANE then
          looked = looked + 1
          if not visit(level, at, pending_key(level, at)) then
            return looked, 'r' .. level .. ':' .. at_score .. ':' .. at
          end
        end
        -- (a lane visit emptied left ready: the lanes behind it moved up one rank)
        if redis.call('ZSCORE', key, at) then rank = rank + 1 end
      end
    until #page == 0
    level = level + 1
  end
  return looked, nil
end

-- The held phase from cursor: each level of each lane of held, HSCAN page by page (COUNT
-- sets_max, so a page read again is the same buckets). A held lane costs one look, or one per
-- set visited, so a page of many lanes, or of lanes at many levels, still stops at sets_max;
-- the position then names the lane and level within the page. If that lane has gone by the
-- next call the page is visited from its start again (visits are idempotent). Returns the
-- position to resume at, or '' once held was scanned through.
local function walk_held(cursor, looked, sets_max, visit, after_held)
  local scan, resume_lane, resume_digit = cursor.scan or '0', cursor.lane, cursor.digit
  repeat
    if looked >= sets_max then return 'h' .. scan end
    local page = redis.call('HSCAN', K_HELD, scan, 'COUNT', sets_max)
    local entries, first = page[2], 1
    for i = 1, #entries, 2 do
      if resume_lane and entries[i] == resume_lane then first = i break end
    end
    for i = first, #entries, 2 do
      local lane, levels = entries[i], entries[i + 1]
      local from = 1
      if i == first and lane == resume_lane and resume_digit then
        from = string.find(levels, resume_digit, 1, true) or 1
      end
      if looked >= sets_max then
        local digit = string.sub(levels, from, from)
        return 'h' .. scan .. ':' .. (digit ~= '' and digit or '0') .. ':' .. lane
      end
      local sets = 0
      for j = from, #levels do
        local digit = string.sub(levels, j, j)
        local at = tonumber(digit)
        if at > 0 or lane ~= DEFAULT_LANE then
          if looked >= sets_max then return 'h' .. scan .. ':' .. digit .. ':' .. lane end
          looked, sets = looked + 1, sets + 1
          if not visit(at, lane, pending_key(at, lane)) then return 'h' .. scan .. ':' .. digit .. ':' .. lane end
        end
      end
      if sets == 0 then looked = looked + 1 end
      if after_held then after_held(lane) end
    end
    resume_lane, resume_digit = nil, nil
    scan = page[1]
  until scan == '0'
  return ''
end

-- Visits pending sets from the cursor in a fixed order: the plain pending set (named even when
-- empty: queues written before lanes have no index entry for it), each lane of ready:0 ..
-- ready:TOP_LEVEL in index order, then each level of each lane in held. At most sets_max sets
-- (or held lanes) per call. visit(level, lane, key) returns true when it is done with the set,
-- false when the call's budget ran out there (the walk stops and resumes at that set).
-- after_held(lane), if given, runs once every level of a held lane was visited. Returns the
-- position to resume at, or '' once every set was visited. A lane that stays in its index for
-- the whole walk is visited; one that joins, or leaves and comes back, behind the cursor is
-- not (the callers begin another walk: walk_next, and obliterate's own check).
local function walk_pending(cursor, sets_max, visit, after_held)
  local looked, phase = 0, cursor.phase
  if phase == '' then return '' end
  if phase == 'p' then
    looked = 1
    if not visit(0, DEFAULT_LANE, BASE .. 'pending') then return 'p' end
    phase = 'r'
  end
  if phase == 'r' then
    local position
    looked, position = walk_ready(cursor, looked, sets_max, visit)
    if position then return position end
    cursor = { phase = 'h' }
  end
  return walk_held(cursor, looked, sets_max, visit, after_held)
end

-- The cursor drain and clean hand the next call: position in this walk, with the walk's number,
-- whether it removed a job (took: this call did) and held's size when it began. A walk that
-- ends begins walk + 1, up to WALKS_MAX, when work may be left behind it:
--   held's size changed during it: a lane left held behind the cursor (a freed cap, a resume)
--     even when the walk removed nothing; it misses only a walk during which exactly as many
--     lanes joined held as left it;
--   it removed jobs and held, the plain pending set or a ready index is not empty;
--   (when_ready) the plain pending set or a ready index is not empty.
-- A finished walk ('') stays finished: drain's schedule phase calls again with '', which must
-- not begin a new series of walks. '' when done.
local function walk_next(cursor, position, took, when_ready)
  if cursor.phase == '' then return '' end
  took = took or cursor.took
  if position ~= '' then
    return 'w' .. cursor.walk .. ':' .. (took and 1 or 0) .. ':' .. cursor.held_size .. ':' .. position
  end
  if cursor.walk >= ${WALKS_MAX} then return '' end
  local held_size = redis.call('HLEN', K_HELD)
  local again = held_size ~= cursor.held_size
  local indexes = { BASE .. 'pending' }
  for level = 0, TOP_LEVEL do indexes[#indexes + 1] = ready_key(level) end
  if not again and took then again = held_size > 0 end
  if not again and (when_ready or took) then again = redis.call('EXISTS', unpack(indexes)) > 0 end
  if again then return 'w' .. (cursor.walk + 1) .. ':0:' .. held_size .. ':p' end
  return ''
end
`;
