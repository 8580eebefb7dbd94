import { SCRIPT_BATCH_MAX } from '../limits';
import { luaScript } from './prelude';

export const REPAIR_ORPHANS_LUA = luaScript(
  `
-- repair orphans (doctor): rows of unfinished jobs that are in no state set (invariant 2:
-- such a job would never run, and every read calls it unknown). A row with a finished-at
-- ('f': a retained completed job) is finished and fine. With ARGV[1] = 1 each orphan goes
-- back: to dead when its retry budget is spent (a - b >= its budget, as reap decides), else
-- into its own lane's pending at its level (waking a worker); its claimant goes ('c': a row
-- holds one only while in active). With 0 nothing is written. Each row is checked here, at one
-- instant, against its own pending set, active, schedule and dead. Idempotent.
-- KEYS[1] fence   KEYS[2] active   KEYS[3] schedule   KEYS[4] dead   KEYS[5] metrics   KEYS[6] wake
-- ARGV[1] 1 repair | 0 check   ARGV[2..] ids whose rows were found (1 to ${SCRIPT_BATCH_MAX})
-- Returns: per orphan, { id, where it goes: pending | dead }.
`,
  `
local repair = int_arg(1, 0, 1) == 1
if #ARGV < 2 or #ARGV > 1 + BATCH_MAX then refuse('expected 1 to ' .. BATCH_MAX .. ' ids from ARGV[2]') end
local out, woke = {}, false
for i = 2, #ARGV do
  local id = ARGV[i]
  local row = ROW_PREFIX .. id
  local f = redis.call('HMGET', row, 'a', 'b', 'm', 'w', 'l', 'y', 'f')
  if f[7] == false and redis.call('EXISTS', row) == 1 then
    local lane, level = place(f[5], f[6])
    local in_set = redis.call('ZSCORE', pending_key(level, lane), id) or redis.call('ZSCORE', KEYS[2], id)
      or redis.call('ZSCORE', KEYS[3], id) or redis.call('ZSCORE', KEYS[4], id)
    if not in_set then
      local to = 'pending'
      if (tonumber(f[1]) or 0) - (tonumber(f[2]) or 0) >= budget(f[3], f[4]) then to = 'dead' end
      out[#out + 1] = { id, to }
      if repair then
        redis.call('HDEL', row, 'c')
        if to == 'dead' then
          redis.call('ZADD', KEYS[4], 0, id)
        else
          into_pending(lane, level, { id })
          woke = true
        end
      end
    end
  end
end
if repair and #out > 0 then
  if woke then wake(KEYS[6]) end
  bump(KEYS[5], 'repaired', #out)
end
return out
`,
);
