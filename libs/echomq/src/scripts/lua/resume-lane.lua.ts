import { LANE_ARG_LUA } from './lane-arg';
import { luaScript } from './prelude';

export const RESUME_LANE_LUA = luaScript(
  `
-- resume lane (admin): undoes pause-lane, and lifts a throttle hold (a RateLimitedError of
-- scope lane) the lane is under: an operator resuming a lane wants it to run. The lane
-- returns to ready at every level where it has work, unless its cap or its rate window still
-- holds it, and a worker is woken when it came back with work. Idempotent.
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] paused lanes   KEYS[4] events
-- KEYS[5] wake
-- ARGV[1] lane   ARGV[2] events max length   ARGV[3] replay window ms
-- Returns: 1 when the lane was paused before, else 0; a repeated request returns its first
--          reply.
-- Errors:  EMQ_BAD_ARG for a bad lane name (before anything is written).
-- Event:   'lane-resumed' with the lane, when it was paused before.
`,
  `${LANE_ARG_LUA}
local lane = lane_arg(1)
local maxlen = int_arg(2, 1, 1000000000)
local replay_ttl = int_arg(3, 1, 1000000000000)

local prior = replayed(KEYS[2])
if prior then return tonumber(prior) end

local resumed = redis.call('SREM', KEYS[3], lane)
redis.call('ZREM', K_HOLDS, lane)
if try_restore(lane) then wake(KEYS[5]) end
if resumed == 1 then emit(KEYS[4], maxlen, 'type', 'lane-resumed', 'ids', '', 'lane', lane) end
record(KEYS[2], resumed, replay_ttl)
return resumed
`,
);
