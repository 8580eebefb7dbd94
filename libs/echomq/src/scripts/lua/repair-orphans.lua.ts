import { SCRIPT_BATCH_MAX } from '../limits';
import { LANE_ARG_LUA } from './lane-arg';
import { luaScript } from './prelude';
import { REPAIR_EVENT_LUA } from '../repair-lua';

/**
 * Most pending sets one call looks in for a row outside its own sets: the plain pending set, the
 * sets given and every (lane, level) that ready and held name. Past it the call cannot rule out
 * that another lane's set holds the job, so it judges no orphan (it reports them unverified).
 */
export const ORPHAN_RECHECK_SETS_MAX = 2_000;

/**
 * Most ZSCOREs one call spends on that look: a batch whose candidates would need more is judged
 * in part, and the rest come back as 'later' for a call of their own (at least one candidate a
 * call, since ORPHAN_RECHECK_SETS_MAX is below it).
 */
export const ORPHAN_RECHECK_LOOKUPS_MAX = 10_000;

export const REPAIR_ORPHANS_LUA = luaScript(
  `
-- repair orphans (doctor): rows of unfinished jobs that are in no state set (invariant 2:
-- such a job would never run, and every read calls it unknown). A row with a finished-at
-- ('f': a retained completed job) is finished and fine. With ARGV[1] = 1 each orphan goes
-- back: to dead when its retry budget is spent (a - b >= its budget, as reap decides), else
-- into its own lane's pending at its level (waking a worker); its claimant goes ('c': a row
-- holds one only while in active). With 0 nothing is written. Idempotent.
-- Never a second copy: a row outside its own pending set, active, schedule and dead is an
-- orphan only once no other pending set holds it either (it would be a wrong-pending-set job,
-- which repair-duplicates moves home). This script looks in every pending set it can know of:
-- the plain pending set, the sets given in ARGV (the doctor passes those where it found
-- misplaced jobs), and each (lane, level) that ready:<level> or held names. It cannot see a
-- lane's set that no index names (an unindexed set, itself a lane-index finding): the doctor
-- reads every pending set, found by SCAN, and moves misplaced jobs home before it judges any
-- row. With more than ${ORPHAN_RECHECK_SETS_MAX} such sets it judges none ('unverified', nothing written);
-- candidates past ${ORPHAN_RECHECK_LOOKUPS_MAX} lookups in one call come back 'later', unjudged.
-- Each row is checked here, at one instant.
-- KEYS[1] fence   KEYS[2] active   KEYS[3] schedule   KEYS[4] dead   KEYS[5] metrics
-- KEYS[6] events   KEYS[7] wake
-- ARGV[1] 1 repair | 0 check   ARGV[2] events max length   ARGV[3] N more pending sets to
-- look in (0 to ${SCRIPT_BATCH_MAX})   ARGV[4..3+2N] N pairs: level, lane
-- ARGV[4+2N..] ids whose rows were found (1 to ${SCRIPT_BATCH_MAX})
-- Returns: per row outside its own sets and held by no other, { id, pending | dead (where it
--          goes), or unverified | later (not judged) }.
-- Event:   repairing, 'repaired' kind orphan-row with the ids and where each went (to).
`,
  `${LANE_ARG_LUA}${REPAIR_EVENT_LUA}
local repair = int_arg(1, 0, 1) == 1
local maxlen = maxlen_arg(2)
local n = int_arg(3, 0, BATCH_MAX)
local first = 4 + 2 * n
if #ARGV < first or #ARGV > first - 1 + BATCH_MAX then
  refuse('expected 1 to ' .. BATCH_MAX .. ' ids from ARGV[' .. first .. ']')
end
local sets, listed = {}, {}
local function look_in(key)
  if not listed[key] then
    listed[key] = true
    sets[#sets + 1] = key
  end
end
look_in(BASE .. 'pending')
for i = 0, n - 1 do look_in(pending_key(int_arg(4 + 2 * i, 0, TOP_LEVEL), lane_arg(5 + 2 * i))) end

-- Rows of unfinished jobs outside their own pending set, active, schedule and dead.
local candidates = {}
for i = first, #ARGV do
  local id = ARGV[i]
  local row = ROW_PREFIX .. id
  local f = redis.call('HMGET', row, 'a', 'b', 'm', 'w', 'l', 'y', 'f')
  if f[7] == false and redis.call('EXISTS', row) == 1 then
    local lane, level = place(f[5], f[6])
    local own = pending_key(level, lane)
    if not (redis.call('ZSCORE', own, id) or redis.call('ZSCORE', KEYS[2], id)
        or redis.call('ZSCORE', KEYS[3], id) or redis.call('ZSCORE', KEYS[4], id)) then
      candidates[#candidates + 1] = { id = id, row = row, f = f, lane = lane, level = level, own = own }
    end
  end
end
if #candidates == 0 then return {} end

-- Every other pending set the index names (sizes first, so a huge index is not read).
local indexed = redis.call('HLEN', K_HELD)
for level = 0, TOP_LEVEL do indexed = indexed + redis.call('ZCARD', ready_key(level)) end
local known = #sets + indexed <= ${ORPHAN_RECHECK_SETS_MAX}
if known then
  for level = 0, TOP_LEVEL do
    for _, lane in ipairs(redis.call('ZRANGE', ready_key(level), 0, -1)) do look_in(pending_key(level, lane)) end
  end
  local held = redis.call('HGETALL', K_HELD)
  for i = 1, #held, 2 do
    for digit in string.gmatch(held[i + 1], '[0-9]') do look_in(pending_key(tonumber(digit), held[i])) end
  end
  known = #sets <= ${ORPHAN_RECHECK_SETS_MAX}
end

local out, ids, to, woke = {}, {}, {}, false
local judged = math.max(1, math.floor(${ORPHAN_RECHECK_LOOKUPS_MAX} / #sets))
for i, c in ipairs(candidates) do
  if not known then
    out[#out + 1] = { c.id, 'unverified' }
  elseif i > judged then
    out[#out + 1] = { c.id, 'later' }
  else
    local elsewhere = false
    for _, key in ipairs(sets) do
      if key ~= c.own and redis.call('ZSCORE', key, c.id) then
        elsewhere = true
        break
      end
    end
    if not elsewhere then
      local place_to = 'pending'
      if (tonumber(c.f[1]) or 0) - (tonumber(c.f[2]) or 0) >= budget(c.f[3], c.f[4]) then place_to = 'dead' end
      out[#out + 1] = { c.id, place_to }
      if repair then
        redis.call('HDEL', c.row, 'c')
        if place_to == 'dead' then
          redis.call('ZADD', KEYS[4], 0, c.id)
        else
          into_pending(c.lane, c.level, { c.id })
          woke = true
        end
        ids[#ids + 1] = c.id
        to[#to + 1] = place_to
      end
    end
  end
end
if #ids > 0 then
  if woke then wake(KEYS[7]) end
  bump(KEYS[5], 'repaired', #ids)
  emit_repaired(KEYS[6], maxlen, 'orphan-row', #ids, ids, to)
end
return out
`,
);
