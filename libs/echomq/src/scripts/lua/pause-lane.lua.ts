import { LANE_ARG_LUA } from './lane-arg';
import { luaScript } from './prelude';

export const PAUSE_LANE_LUA = luaScript(
  `
-- pause lane (admin): workers claim nothing from the lane until resume-lane; its jobs stay
-- pending (enqueue goes on), its active jobs run to their end, other lanes go on. The lane
-- leaves ready at every level and is held with the levels where it has work. Idempotent.
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] paused lanes   KEYS[4] events
-- ARGV[1] lane   ARGV[2] events max length   ARGV[3] replay window ms
-- Returns: 1 when the lane was not paused before, else 0; a repeated request returns its
--          first reply.
-- Errors:  EMQ_BAD_ARG for a bad lane name (before anything is written).
-- Event:   'lane-paused' with the lane, when it was not paused before.
`,
  `${LANE_ARG_LUA}
local lane = lane_arg(1)
local maxlen = int_arg(2, 1, 1000000000)
local replay_ttl = int_arg(3, 1, 1000000000000)

local prior = replayed(KEYS[2])
if prior then return tonumber(prior) end

local paused = redis.call('SADD', KEYS[3], lane)
flow_in_use()
hold_lane(lane)
if paused == 1 then emit(KEYS[4], maxlen, 'type', 'lane-paused', 'ids', '', 'lane', lane) end
record(KEYS[2], paused, replay_ttl)
return paused
`,
);
