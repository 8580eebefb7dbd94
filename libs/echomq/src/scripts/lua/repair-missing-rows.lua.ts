import { LANE_ARG_LUA } from './lane-arg';
import { SCRIPT_BATCH_MAX } from '../limits';
import { luaScript } from './prelude';

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
-- (An active member leaves lane-active as it is: without a row its lane is unknown, as in reap;
-- the doctor recounts lane-active afterwards, repair-lane-active.)
-- KEYS[1] fence   KEYS[2] the set: pending (a lane's at a level), active, schedule or dead
-- KEYS[3] metrics
-- ARGV[1] 1 repair | 0 check   ARGV[2] the set's state (pending | active | schedule | dead)
-- ARGV[3] its lane, ARGV[4] its level (pending only, else '')   ARGV[5..] members (1 to ${SCRIPT_BATCH_MAX})
-- Returns: { members without a row that are job ids, members that are not job ids }
--          (removed when repairing; 'repaired' in metrics counts them).
`,
  `${LANE_ARG_LUA}
local repair = int_arg(1, 0, 1) == 1
local state = ARGV[2]
local set = BASE .. state
if state == 'pending' then
  set = pending_key(int_arg(4, 0, TOP_LEVEL), lane_arg(3))
elseif state ~= 'active' and state ~= 'schedule' and state ~= 'dead' then
  refuse('ARGV[2] must be pending, active, schedule or dead')
end
if KEYS[2] ~= set then refuse('KEYS[2] must be the ' .. state .. ' set named by ARGV[2..4]') end
if #ARGV < 5 or #ARGV > 4 + BATCH_MAX then refuse('expected 1 to ' .. BATCH_MAX .. ' members from ARGV[5]') end

local missing, malformed = {}, {}
for i = 5, #ARGV do
  local member = ARGV[i]
  if redis.call('ZSCORE', KEYS[2], member) then
    if not (#member == 14 and string.find(member, '^JOB[0-9A-Za-z]+$')) then
      malformed[#malformed + 1] = member
    elseif redis.call('EXISTS', ROW_PREFIX .. member) == 0 then
      missing[#missing + 1] = member
    end
  end
end
if repair and #missing + #malformed > 0 then
  zrem_all(KEYS[2], missing)
  zrem_all(KEYS[2], malformed)
  if state == 'pending' then drained(ARGV[3], tonumber(ARGV[4])) end
  bump(KEYS[3], 'repaired', #missing + #malformed)
end
return { missing, malformed }
`,
);
