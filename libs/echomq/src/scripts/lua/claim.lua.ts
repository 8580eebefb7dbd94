import { luaScript } from './prelude';

/** The most crash suspects one claim skips (reads and leaves in pending) before its walk ends. */
export const CLAIM_SUSPECTS_SKIPPED_MAX = 100;

export const CLAIM_LUA = luaScript(
  `
-- claim: pending -> active, up to N jobs, after promoting due scheduled jobs and due lane timers.
-- Which jobs: the highest priority level with claimable lanes first; among its lanes, the
-- one with the smallest pass (stride scheduling: a lane's pass grows by 1/weight per job it
-- starts), FIFO within a lane. The queue's limits hold for every worker together: paused or
-- held (RateLimitedError) -> nothing; globalConcurrency caps active; rateLimit caps starts
-- per window; a lane at its cap or rate limit is held back until a slot frees or its window
-- opens (docs/flow-control.md).
-- Each claimed job's attempts (the fencing token) goes up by one, and the claim records a
-- claimant unique to it (the caller's per-call prefix + the job's index).
-- The prefix is the request id: a claim repeated with the same prefix (its reply was lost)
-- returns the jobs the first call claimed, still held by it, and claims nothing more.
-- Crash suspects (row 'x', set by reap: the job's last lease ran out, so it may have killed its
-- worker) are handed out as ARGV[9] says: 'any' like every job; 'alone' only as the call's one
-- job (met first, it is taken and the walk ends; met after others, it is skipped); 'none'
-- never (skipped). A skipped suspect stays where it is in pending, the jobs behind it are
-- taken; a lane with only suspects left within reach is set aside for the rest of the walk;
-- at most ${CLAIM_SUSPECTS_SKIPPED_MAX} are skipped per call (then the walk ends). The reply says
-- whether any was skipped, so the worker can claim it alone once its process holds nothing.
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] pending (default lane, level 0)
-- KEYS[4] active   KEYS[5] schedule   KEYS[6] metrics   KEYS[7] events   KEYS[8] wake   KEYS[9] paused
-- (the flow keys - ready sets, lane pending sets, held, timers, settings, rate windows - are
--  composed from the queue's base, see flow.ts)
-- ARGV[1] row prefix emq:{q}:job:   ARGV[2] N   ARGV[3] lease ms   ARGV[4] claimant prefix
-- ARGV[5] events max length   ARGV[6] most scheduled jobs to promote in this call
-- ARGV[7] replay window ms   ARGV[8] the claiming worker's max attempts per budget, recorded
-- as 'w' on each claimed row that has no 'm' of its own (fail and reap then decide by it)
-- ARGV[9] crash suspects: any | alone | none (absent: any)
-- Returns: { next run-at (ms, the soonest of schedule and lane timers, -1 when none),
--            lease deadline (ms), limited until (ms, -1 when not limited: the queue is held
--            or out of rate room, so no claim can start a job before then), server now (ms),
--            suspect ahead (1 when the walk skipped a crash suspect it could not take, else
--            0; 0 in a repeat's answer),
--            then per claimed job: id, attempts, claimant, data, name, max attempts (the
--            job's own, else ARGV[8]), budget base, its own backoff as JSON (nil when none),
--            lane, priority, its own timeout ms (nil when none), its schedule key (nil when
--            it is no schedule's occurrence), 1 when it is a crash suspect else 0, the trace
--            context its producer left on it (row 'tc'; nil when none) }
-- Record:  the lease deadline; every job of one claim has it as its score in active (a set of
--          more than 16 jobs kept a skiplist: see into_active).
-- Event:   'promoted' (when due jobs moved), 'claimed' with the ids.
-- Metric:  'claimed'; 'isolated' for a crash suspect handed out alone.
`,
  `
local CLAIM_SUSPECTS_SKIPPED_MAX = ${CLAIM_SUSPECTS_SKIPPED_MAX}
local prefix, claimant_prefix = ARGV[1], ARGV[4]
local n = int_arg(2, 1, BATCH_MAX)
local lease = int_arg(3, 1, 1000000000)
local maxlen = int_arg(5, 1, 1000000000)
local promote_limit = int_arg(6, 0, BATCH_MAX)
local replay_ttl = int_arg(7, 1, 1000000000000)
local worker_max = int_arg(8, 1, 1000000)
local suspects = ARGV[9] or 'any'
if suspects ~= 'any' and suspects ~= 'alone' and suspects ~= 'none' then
  refuse('ARGV[9] must be any, alone or none')
end
-- Whether the walk reads each job before it leaves pending (to stop at a crash suspect).
local watch = suspects ~= 'any'
local now = now_ms()

-- The soonest lane timer or throttle hold (false when none), read once unless lanes_due or
-- the walk changes them.
local timer_head = nil
local function soonest_timer()
  if timer_head == nil then
    local t = redis.call('ZRANGE', K_TIMERS, 0, 0, 'WITHSCORES')
    local h = redis.call('ZRANGE', K_HOLDS, 0, 0, 'WITHSCORES')
    local a, b = tonumber(t[2]), tonumber(h[2])
    timer_head = (a and b and math.min(a, b)) or a or b or false
  end
  return timer_head or nil
end

local function next_run_at()
  local s = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
  local a, b = tonumber(s[2]), soonest_timer()
  if a and b then return math.min(a, b) end
  return a or b or -1
end

-- The row's fields one claimed job's reply needs (f[1] .. f[16]); a repeat also reads the
-- claimant and the claiming worker's budget (f[17], f[18]). Each field named costs a scan of the
-- row, so a claim names only what it uses.
local function read_row(row)
  return redis.call('HMGET', row, 'd', 'd2', 'd3', 'd4', 'dn', 'n', 'm', 'b', 'a', 'o', 'l', 'y', 't', 'sk', 'x', 'tc')
end

local function read_claimed_row(row)
  return redis.call('HMGET', row, 'd', 'd2', 'd3', 'd4', 'dn', 'n', 'm', 'b', 'a', 'o', 'l', 'y', 't', 'sk', 'x', 'tc', 'c', 'w')
end

-- Appends one job's reply values at out[at + 1] .. out[at + 14] (out's length, which # would
-- look up for each value); returns the new length.
local function describe(out, at, id, row, f, attempts, claimant, max)
  local lane, level = place(f[11], f[12])
  out[at + 1], out[at + 2], out[at + 3], out[at + 4] = id, attempts, claimant, get_data(row, f)
  out[at + 5], out[at + 6], out[at + 7], out[at + 8] = f[6], max, f[8], f[10]
  out[at + 9], out[at + 10], out[at + 11], out[at + 12] = lane, level, f[13], f[14]
  out[at + 13], out[at + 14] = f[15] and 1 or 0, f[16]
  return at + 14
end

-- The claimed ids into active at their lease deadline. A sorted set of up to
-- zset-max-listpack-entries (128) short members is a listpack, where each insert scans the whole
-- set and moves its tail: a ZADD of 50 ids into an active set of 50 costs about eight times what
-- it costs in the skiplist Redis uses for larger sets (bench/script-cost.ts shows the drain).
-- Once active would hold more than ACTIVE_LISTPACK_MOST jobs, a 128-byte member (longer than
-- zset-max-listpack-value, 64 by default; a server set higher keeps the listpack, as before)
-- makes Redis convert it, and is taken out again before anything else runs: active holds
-- exactly the claimed jobs when the script ends, and Redis never turns a skiplist back into a
-- listpack (a set that empties is deleted, and starts small again).
local ACTIVE_LISTPACK_MOST = 16
local function into_active(active, deadline, ids)
  local seed = (#ids > ACTIVE_LISTPACK_MOST or #ids + redis.call('ZCARD', active) > ACTIVE_LISTPACK_MOST)
    and redis.call('OBJECT', 'ENCODING', active) ~= 'skiplist' and string.rep('~', 128)
  if seed then redis.call('ZADD', active, 0, seed) end
  zadd_all(active, deadline, ids)
  if seed then redis.call('ZREM', active, seed) end
end

local prior = replayed(KEYS[2])
if prior then
  local deadline = tonumber(prior)
  local out = { next_run_at(), deadline, -1, now, 0 }
  local mine = claimant_prefix .. '.'
  local at = #out
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], deadline, deadline)) do
    local row = prefix .. id
    local f = read_claimed_row(row)
    local held_by = f[17]
    -- exactly <prefix>.<index>: a prefix may itself contain dots ('p' must not match 'p.1.0')
    if held_by and string.sub(held_by, 1, #mine) == mine and string.match(string.sub(held_by, #mine + 1), '^%d+$') then
      at = describe(out, at, id, row, f, tonumber(f[9]), held_by, budget(f[7], f[18] or worker_max))
    end
  end
  return out
end

-- First write: a full Redis still claims, and the jobs it hands out complete and free room.
runs_when_full()
local deadline = now + lease
local due = promote_due(KEYS[5], promote_limit, now)
if #due > 0 then
  redis.call('HINCRBY', KEYS[6], 'promoted', #due)
  emit(KEYS[7], maxlen, 'type', 'promoted', 'ids', table.concat(due, ','))
end
record(KEYS[2], deadline, replay_ttl)

-- A queue that never used limits, lane settings or pauses, throttles or priorities above 0
-- has no flow mark (flow_in_use, read after promotion, which can set it): the reads that
-- could only find nothing are then skipped.
-- One EXISTS for the common case: no mark and not paused (a RateLimitedError's hold sets
-- the mark too).
local marked_or_paused = redis.call('EXISTS', K_FLOW, KEYS[9])
if marked_or_paused == 0 then flow_mark = false end
local plain = not flow_on()
if plain then
  timer_head = false
else
  local due_timer = soonest_timer()
  if due_timer and due_timer <= now then
    lanes_due(now)
    timer_head = nil
  end
end

local function header(limited_until)
  return { next_run_at(), deadline, limited_until, now, 0 }
end
-- Paused, or held by a RateLimitedError.
if marked_or_paused > 0 and redis.call('EXISTS', KEYS[9], K_HOLD) > 0 then
  if redis.call('EXISTS', KEYS[9]) == 1 then
    return header(-1)
  end
  local hold = redis.call('PTTL', K_HOLD)
  if hold > 0 then
    return header(now + hold)
  end
end

-- How many this call may start: the request, within the queue's caps.
local s = plain and {} or settings()
local want = n
local gc_cut = false
if s.gc then
  local room = s.gc - redis.call('ZCARD', KEYS[4])
  if room < want then
    if room <= 0 then
      -- A slot freed later (complete, fail, reap...) wakes a worker (see leaving() in flow.ts),
      -- when there is work for it.
      if any_ready() then redis.call('SET', K_WAITING, '1') end
      return header(-1)
    end
    want = room
    gc_cut = true
  end
end
if s.rm and s.rw then
  local room, opening = window_room(K_RATE, s.rm, s.rw, now)
  if room <= 0 then return header(opening) end
  want = math.min(want, room)
end

local out = header(-1)
local out_len = #out
local ids = {}
local orphans = 0
local left = want
-- Start at the highest level; one EXISTS tells when no level above 0 has work (the common
-- queue that uses no priorities), saving an empty look at each.
local level = TOP_LEVEL
if plain then
  level = 0
else
  local upper = {}
  for l = 1, TOP_LEVEL do upper[#upper + 1] = ready_key(l) end
  if redis.call('EXISTS', unpack(upper)) == 0 then level = 0 end
end
-- Per lane, read once per call: weight, cap, jobs in active before this call, jobs started now.
local rules, started = {}, {}
local adopted = false
-- Lanes held back by this call; past CLAIM_HOLDS_MAX the walk stops and passes the wake on.
local holds, timed = 0, false
-- The lane served last still has work and is still ready (so work is left).
local kept_work = false
-- Crash suspects met: some skipped (ahead), or one taken alone (the walk ends there). Skips
-- are bounded per call; lanes left with only suspects within reach are set aside (out of
-- ready until the walk ends, counted with the held ones).
local ahead, alone = false, false
local skip_left = CLAIM_SUSPECTS_SKIPPED_MAX
local set_aside = {}
-- The pass of the lane served last at the current level: the level's virtual time, written
-- once when the claim leaves the level.
local served = nil
local function leave_level()
  if served then redis.call('HSET', K_VTIME, level, served) end
  served = nil
end
while left > 0 and level >= 0 do
  local ready = ready_key(level)
  local top = redis.call('ZRANGE', ready, 0, 1, 'WITHSCORES')
  if #top == 0 and level == 0 and not adopted then
    -- Nothing ready at the last level: jobs an older version left in pending, if any.
    adopted = true
    if adopt_plain_pending() then top = redis.call('ZRANGE', ready, 0, 1, 'WITHSCORES') end
  end
  if #top == 0 then
    leave_level()
    level = level - 1
  else
    local lane, pass = top[1], tonumber(top[2])
    local rule = rules[lane]
    if not rule then
      -- (unmarked, no lane has settings and the queue has no limits: weight 1, no cap)
      local weight, cap = 1, nil
      if not plain then weight, cap = lane_rules(lane) end
      rule = { weight = weight, cap = cap, active = cap and lane_active(lane) or 0, started = 0 }
      rules[lane] = rule
    end
    local weight, cap = rule.weight, rule.cap
    local room, opening = left, nil
    if cap then room = math.min(room, cap - rule.active - rule.started) end
    if room > 0 and s.lm and s.lw then
      local lane_room, lane_opening = window_room(lane_rate_key(lane), s.lm, s.lw, now)
      if lane_room <= 0 then opening = lane_opening end
      room = math.min(room, lane_room)
    end
    if room <= 0 then
      -- Held back, at every level (a cap and a rate limit are the lane's, not a level's),
      -- until a slot frees or its window opens.
      hold_lane(lane)
      kept_work = false
      if opening then
        redis.call('ZADD', K_TIMERS, opening, lane)
        timed = true
      end
      holds = holds + 1
      if holds >= CLAIM_HOLDS_MAX then break end
    else
      -- As many as keep its pass at or below the next lane's (one when they alternate); the
      -- epsilon keeps a product like 1.9999999 from losing a job to rounding.
      if top[4] then room = math.min(room, math.floor((tonumber(top[4]) - pass) * weight + 1e-9) + 1) end
      local key = pending_key(level, lane)
      local taken, got, skipped = {}, 0, 0
      local function take(id, row, f)
        taken[#taken + 1] = id
        if not f[1] then
          -- A member without a row breaks invariant 2; drop it rather than hand out an empty job.
          orphans = orphans + 1
          return
        end
        local claimant = claimant_prefix .. '.' .. #ids
        -- attempts + 1 and the claimant in one HSET (the script is atomic, so read-then-write is safe)
        local attempts = (tonumber(f[9]) or 0) + 1
        out_len = describe(out, out_len, id, row, f, attempts, claimant, budget(f[7], worker_max))
        if f[7] then
          redis.call('HSET', row, 'a', attempts, 'c', claimant)
        else
          -- No budget of its own: this claim's worker decides it, the last claim's configuration winning.
          redis.call('HSET', row, 'a', attempts, 'c', claimant, 'w', worker_max)
        end
        ids[#ids + 1] = id
        got = got + 1
      end
      if not watch then
        local popped = redis.call('ZPOPMIN', key, room)
        for i = 1, #popped, 2 do
          local row = prefix .. popped[i]
          take(popped[i], row, read_row(row))
        end
      else
        -- Watching for suspects, the jobs are read before they leave pending (ZRANGE, then ZREM
        -- of those taken): a suspect that may not be taken is skipped, and stays where it is.
        local offset = 0
        while #taken < room and not alone and skip_left > 0 do
          local heads = redis.call('ZRANGE', key, offset, offset + room - #taken - 1)
          if #heads == 0 then break end
          offset = offset + #heads
          for _, id in ipairs(heads) do
            local row = prefix .. id
            local f = read_row(row)
            if not (f[1] and f[15]) then
              take(id, row, f)
            elseif suspects == 'alone' and #ids == 0 then
              -- Met first by a call whose worker holds nothing else: it runs alone.
              take(id, row, f)
              alone = true
              break
            else
              ahead = true
              skipped = skipped + 1
              skip_left = skip_left - 1
              if skip_left == 0 then break end
            end
          end
        end
        if #taken > 0 then zrem_all(key, taken) end
      end
      local took = #taken
      -- Only suspects were left within reach: the lane is done for this call.
      local aside = skipped > 0 and took < room
      -- The level's virtual time is the pass the served lane has now: a lane that runs empty
      -- and gets work again rejoins there, having paid for what it just started.
      local after = pass + took / weight
      -- Whether the lane keeps work (then the wake pass-on below needs no look of its own).
      kept_work = (took == room or alone or aside) and redis.call('EXISTS', key) == 1
      if not kept_work then
        if took > 0 then served = after end
        redis.call('ZREM', ready, lane)
      elseif top[3] then
        if took > 0 then served = after end
        redis.call('ZADD', ready, after, lane)
      end
      -- (A lane alone at its level keeps its pass, and the level its virtual time: with no
      -- other lane to compare with, only where the two stand to each other matters, and a
      -- lane that joins ties with it either way.)
      if aside then
        -- The walk goes on without it; it returns to ready, at the pass it has now, at the end.
        set_aside[#set_aside + 1] = { ready, redis.call('ZSCORE', ready, lane), lane }
        redis.call('ZREM', ready, lane)
        -- (not adopted back into ready by adopt_plain_pending within this call)
        adopted = true
        holds = holds + 1
      end
      if got > 0 then
        if rule.started == 0 then started[#started + 1] = lane end
        rule.started = rule.started + got
        if s.lm and s.lw then count_starts(lane_rate_key(lane), got, s.lw, now) end
      end
      left = left - got
      if alone or skip_left == 0 or holds >= CLAIM_HOLDS_MAX then break end
    end
  end
end
for _, lane in ipairs(set_aside) do redis.call('ZADD', lane[1], lane[2], lane[3]) end

leave_level()
for _, lane in ipairs(started) do
  if counted(lane) then redis.call('HINCRBY', K_LANE_ACTIVE, lane, rules[lane].started) end
end
if #ids > 0 then
  into_active(KEYS[4], deadline, ids)
  redis.call('HINCRBY', KEYS[6], 'claimed', #ids)
  emit(KEYS[7], maxlen, 'type', 'claimed', 'ids', table.concat(ids, ','))
  if s.rm and s.rw then
    count_starts(K_RATE, #ids, s.rw, now)
    -- This call used the window's last room: say when the next opens, so workers sleep
    -- until then instead of waiting for a wake that no claim can use before it.
    local room, opening = window_room(K_RATE, s.rm, s.rw, now)
    if room <= 0 then out[3] = opening end
  end
end
bump(KEYS[6], 'orphans', orphans)
if alone then redis.call('HINCRBY', KEYS[6], 'isolated', 1) end
if ahead then out[5] = 1 end
-- A lane rate timer set by this walk may be the soonest instant to claim again.
if timed then
  timer_head = nil
  out[1] = next_run_at()
end
local function work_left()
  if kept_work then return true end
  for l = level, 0, -1 do
    if redis.call('EXISTS', ready_key(l)) == 1 then return true end
  end
  return false
end
if left == 0 and gc_cut and work_left() then
  -- globalConcurrency cut this call short: the next slot freed wakes a worker.
  redis.call('SET', K_WAITING, '1')
elseif ((left == 0 and want == n) or holds >= CLAIM_HOLDS_MAX or ahead or alone) and work_left() then
  -- Work is left (and no cap stopped this call): pass the wake token on to the next idle worker
  -- (after a suspect, an idle one can take the next job alone).
  wake(KEYS[8])
end
return out
`,
);
