import { LANE_ARG_LUA } from './lane-arg';
import { SCRIPT_BATCH_MAX } from '../limits';
import { encodeBase62, UINT64_MAX } from '../../ids/base62';
import { luaScript } from './prelude';
import { REPAIR_EVENT_LUA } from '../repair-lua';

/**
 * Members of one state set that have no row (invariant 2), as doctor reads them in batches.
 * Members are passed as the set holds them, not composed by a caller: a member that is not a
 * job id has no row by definition, and no row key is composed for it.
 */
export const REPAIR_MISSING_ROWS_LUA = luaScript(
  `
-- repair missing rows (doctor): members of one state set that have no row, which no
-- transition can act on (invariant 2). With ARGV[1] = 1 they leave the set (a pending set its
-- lane then leaves ready or held at that level, when it is empty); with 0 nothing is written.
-- Each member is checked here, at one instant: one that left the set, or whose row exists, is
-- not reported, so a doctor running beside workers reports only what is true. Idempotent.
-- A member is a job id exactly as ids/branded-id.ts says (brand, 11 Base62 digits, at most
-- 2^64-1); any other member is malformed, and no row key is composed for it.
-- (An active member leaves lane-active as it is: without a row its lane is unknown, as in reap;
-- the doctor recounts lane-active afterwards, repair-lane-active.)
-- KEYS[1] fence   KEYS[2] the set: pending (a lane's at a level), active, schedule or dead
-- KEYS[3] metrics   KEYS[4] events
-- ARGV[1] 1 repair | 0 check   ARGV[2] events max length
-- ARGV[3] the set's state (pending | active | schedule | dead)
-- ARGV[4] its lane, ARGV[5] its level (pending only, else '')   ARGV[6..] members (1 to ${SCRIPT_BATCH_MAX})
-- Returns: { members without a row that are job ids, members that are not job ids }
--          (removed when repairing; 'repaired' in metrics counts them).
-- Event:   repairing, 'repaired' kind member-without-row with the ids (to: gone), and kind
--          malformed-member with their count.
`,
  `${LANE_ARG_LUA}${REPAIR_EVENT_LUA}
-- Whether a member is a job id: the brand, then Base62 digits whose value is at most 2^64-1,
-- compared digit by digit (Lua compares strings by the server's locale, not by bytes).
local ID_MAX = '${encodeBase62(UINT64_MAX)}'
local function is_job_id(member)
  if #member ~= #ID_BRAND + ID_WIDTH or string.sub(member, 1, #ID_BRAND) ~= ID_BRAND then return false end
  local body = string.sub(member, #ID_BRAND + 1)
  if not string.find(body, '^[0-9A-Za-z]+$') then return false end
  for i = 1, ID_WIDTH do
    local digit = string.find(B62, string.sub(body, i, i), 1, true)
    local top = string.find(B62, string.sub(ID_MAX, i, i), 1, true)
    if digit ~= top then return digit < top end
  end
  return true
end

local repair = int_arg(1, 0, 1) == 1
local maxlen = maxlen_arg(2)
local state = ARGV[3]
local set = BASE .. state
if state == 'pending' then
  set = pending_key(int_arg(5, 0, TOP_LEVEL), lane_arg(4))
elseif state ~= 'active' and state ~= 'schedule' and state ~= 'dead' then
  refuse('ARGV[3] must be pending, active, schedule or dead')
end
if KEYS[2] ~= set then refuse('KEYS[2] must be the ' .. state .. ' set named by ARGV[3..5]') end
if #ARGV < 6 or #ARGV > 5 + BATCH_MAX then refuse('expected 1 to ' .. BATCH_MAX .. ' members from ARGV[6]') end

local missing, malformed = {}, {}
for i = 6, #ARGV do
  local member = ARGV[i]
  if redis.call('ZSCORE', KEYS[2], member) then
    if not is_job_id(member) then
      malformed[#malformed + 1] = member
    elseif redis.call('EXISTS', ROW_PREFIX .. member) == 0 then
      missing[#missing + 1] = member
    end
  end
end
if repair and #missing + #malformed > 0 then
  zrem_all(KEYS[2], missing)
  zrem_all(KEYS[2], malformed)
  if state == 'pending' then drained(ARGV[4], tonumber(ARGV[5])) end
  bump(KEYS[3], 'repaired', #missing + #malformed)
  local gone = {}
  for i = 1, #missing do gone[i] = 'gone' end
  emit_repaired(KEYS[4], maxlen, 'member-without-row', #missing, missing, gone)
  emit_repaired(KEYS[4], maxlen, 'malformed-member', #malformed)
end
return { missing, malformed }
`,
);
