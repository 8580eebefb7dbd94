import { SCRIPT_BATCH_MAX } from '../limits';
import { LANE_ARG_LUA } from './lane-arg';
import { luaScript } from './prelude';
import { REPAIR_EVENT_LUA } from '../repair-lua';

export const REPAIR_DUPLICATES_LUA = luaScript(
  `
-- repair duplicates (doctor): jobs in more than one state set (invariant 1), or pending in a
-- lane's or level's set other than the one their row names (row 'l', 'y': where every
-- transition and read looks for them). With ARGV[1] = 1 each such job is left in the one set
-- this rule keeps, and taken out of the others:
--   1. in active with a claimant on its row: active (a row holds a claimant only while a claim
--      holds the job, so a worker is running it and its settlement moves it on);
--   2. else the most advanced of the others, in lifecycle order schedule < pending < dead:
--      dead rather than run again a job that may have failed for good (a retry is one call),
--      pending rather than wait out a run-at; active without a claimant is never kept;
--   3. kept pending: in its own lane's set at its level (joining ready there, or held).
-- With 0 nothing is written. Each job is checked here, at one instant, so a job that moved
-- meanwhile is judged as it is now; a job without a row is left to repair-missing-rows. Idempotent.
-- KEYS[1] fence   KEYS[2] active   KEYS[3] schedule   KEYS[4] dead   KEYS[5] metrics
-- KEYS[6] events   KEYS[7] wake
-- ARGV[1] 1 repair | 0 check   ARGV[2] events max length   ARGV[3] lane, ARGV[4] level of a
-- pending set the ids were read from ('' both when not a pending set)   ARGV[5..] ids (1 to ${SCRIPT_BATCH_MAX})
-- Returns: per job found, { id, the sets that held it (comma-separated: pending (its own),
--          pending:<level>:<lane> (another's), active, schedule, dead), the state kept }.
-- Event:   repairing, 'repaired' kind in-two-sets and kind wrong-pending-set (a job only in
--          another lane's or level's set), each with its ids and the state each kept (to).
`,
  `${LANE_ARG_LUA}${REPAIR_EVENT_LUA}
local repair = int_arg(1, 0, 1) == 1
local maxlen = maxlen_arg(2)
local seen_lane, seen_level, seen_key = nil, nil, nil
if ARGV[3] ~= '' then
  seen_lane, seen_level = lane_arg(3), int_arg(4, 0, TOP_LEVEL)
  seen_key = pending_key(seen_level, seen_lane)
end
if #ARGV < 5 or #ARGV > 4 + BATCH_MAX then refuse('expected 1 to ' .. BATCH_MAX .. ' ids from ARGV[5]') end

local RANK = { schedule = 1, pending = 2, dead = 3 }
local OTHERS = { { 'active', KEYS[2] }, { 'schedule', KEYS[3] }, { 'dead', KEYS[4] } }
local out, gone, woke, repaired = {}, leaving(), false, 0
local mended = { ['in-two-sets'] = { ids = {}, to = {} }, ['wrong-pending-set'] = { ids = {}, to = {} } }
for i = 5, #ARGV do
  local id = ARGV[i]
  local row = ROW_PREFIX .. id
  if redis.call('EXISTS', row) == 1 then
    local f = redis.call('HMGET', row, 'l', 'y', 'c')
    local lane, level = place(f[1], f[2])
    local own = pending_key(level, lane)
    local names, holds_in = {}, {}
    if redis.call('ZSCORE', own, id) then
      names[#names + 1] = 'pending'
      holds_in.pending = true
    end
    local misplaced = seen_key ~= nil and seen_key ~= own and redis.call('ZSCORE', seen_key, id) ~= false
    if misplaced then names[#names + 1] = 'pending:' .. seen_level .. ':' .. seen_lane end
    for _, s in ipairs(OTHERS) do
      if redis.call('ZSCORE', s[2], id) then
        names[#names + 1] = s[1]
        holds_in[s[1]] = true
      end
    end
    if #names > 1 or misplaced then
      local keep = nil
      if holds_in.active and f[3] then
        keep = 'active'
      else
        if misplaced then keep = 'pending' end
        for name in pairs(holds_in) do
          if name ~= 'active' and (not keep or RANK[name] > RANK[keep]) then keep = name end
        end
      end
      out[#out + 1] = { id, table.concat(names, ','), keep }
      if repair then
        repaired = repaired + 1
        local kind = mended[#names > 1 and 'in-two-sets' or 'wrong-pending-set']
        kind.ids[#kind.ids + 1] = id
        kind.to[#kind.to + 1] = keep
        if misplaced then
          redis.call('ZREM', seen_key, id)
          drained(seen_lane, seen_level)
        end
        if holds_in.pending and keep ~= 'pending' then
          redis.call('ZREM', own, id)
          drained(lane, level)
        elseif keep == 'pending' and not holds_in.pending then
          into_pending(lane, level, { id })
          woke = true
        end
        for _, s in ipairs(OTHERS) do
          if holds_in[s[1]] and keep ~= s[1] then redis.call('ZREM', s[2], id) end
        end
        if holds_in.active and keep ~= 'active' then gone.add(lane) end
      end
    end
  end
end
if repaired > 0 then
  gone.settle(KEYS[7])
  if woke then wake(KEYS[7]) end
  bump(KEYS[5], 'repaired', repaired)
  for _, kind in ipairs({ 'in-two-sets', 'wrong-pending-set' }) do
    emit_repaired(KEYS[6], maxlen, kind, #mended[kind].ids, mended[kind].ids, mended[kind].to)
  end
end
return out
`,
);
