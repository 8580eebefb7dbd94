import { SCRIPT_BATCH_MAX } from '../limits';
import { LANE_ARG_LUA } from './lane-arg';
import { luaScript } from './prelude';
import { REPAIR_EVENT_LUA } from '../repair-lua';

export const REPAIR_LANE_INDEX_LUA = luaScript(
  `
-- repair lane index (doctor): the claim finds a lane's pending work at a level only through
-- ready:<level> or, while the lane is held back, a digit of held[lane]; a non-empty pending
-- set is named by exactly one of the two, an empty one by neither (docs/flow-control.md).
-- For each (level, lane) given, with ARGV[1] = 1:
--   unindexed (work, named by neither): offered, as enqueue offers it (ready at the level's
--     virtual time, or a held level when the lane is held), and a worker is woken;
--   ready-and-held: out of ready, left held; the lane returns if nothing holds it any more;
--   indexed-without-work: out of ready and held at that level.
-- With 0 nothing is written. Each pair is checked here, at one instant. Idempotent.
-- KEYS[1] fence   KEYS[2] metrics   KEYS[3] events   KEYS[4] wake
-- ARGV[1] 1 repair | 0 check   ARGV[2] events max length   ARGV[3] pair count N (1 to ${SCRIPT_BATCH_MAX})
-- ARGV[4..] N pairs: level (0 to 9), lane
-- Returns: per pair found, { level, lane, unindexed | ready-and-held | indexed-without-work }.
-- Event:   repairing, 'repaired' kind lane-index with the pairs as lanes (<lane>@<level>).
`,
  `${LANE_ARG_LUA}${REPAIR_EVENT_LUA}
local repair = int_arg(1, 0, 1) == 1
local maxlen = maxlen_arg(2)
local n = batch_arg(3, 4, 2)
for i = 0, n - 1 do
  int_arg(4 + 2 * i, 0, TOP_LEVEL)
  lane_arg(5 + 2 * i)
end
local out, woke, mended = {}, false, {}
for i = 0, n - 1 do
  local level, lane = tonumber(ARGV[4 + 2 * i]), ARGV[5 + 2 * i]
  local work = redis.call('EXISTS', pending_key(level, lane)) == 1
  local ready = redis.call('ZSCORE', ready_key(level), lane) ~= false
  local levels = redis.call('HGET', K_HELD, lane)
  local held = levels ~= false and has_level(levels, level)
  local problem = nil
  if work and not ready and not held then
    problem = 'unindexed'
  elseif work and ready and held then
    problem = 'ready-and-held'
  elseif not work and (ready or held) then
    problem = 'indexed-without-work'
  end
  if problem then
    out[#out + 1] = { level, lane, problem }
    if repair then
      mended[#mended + 1] = lane .. '@' .. level
      if problem == 'unindexed' then
        offer(lane, level)
        woke = true
      elseif problem == 'ready-and-held' then
        redis.call('ZREM', ready_key(level), lane)
        if try_restore(lane) then woke = true end
      else
        drained(lane, level)
      end
    end
  end
end
if repair and #out > 0 then
  if woke then wake(KEYS[4]) end
  bump(KEYS[2], 'repaired', #out)
  emit_repaired(KEYS[3], maxlen, 'lane-index', #mended, nil, nil, mended)
end
return out
`,
);
