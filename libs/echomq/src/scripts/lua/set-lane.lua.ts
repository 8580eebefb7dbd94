import { LANE_ARG_LUA } from './lane-arg';
import { luaScript } from './prelude';

/**
 * The range of each field of a lane's own settings (hash lane:<lane>): w its weight, k its
 * concurrency. The wrapper (scripts/lanes.ts) checks the same ranges before sending; the
 * script refuses anything else before writing.
 */
export const LANE_SETTING_FIELD_RANGES = {
  w: { min: 1, max: 1_000 },
  k: { min: 1, max: 1_000_000 },
} as const;

const RANGES = Object.entries(LANE_SETTING_FIELD_RANGES)
  .map(([field, { min, max }]) => `${field} = { ${min}, ${max} }`)
  .join(', ');

export const SET_LANE_LUA = luaScript(
  `
-- set lane (admin): writes one lane's own settings, the hash lane:<lane>: w (its weight
-- against other lanes at the same level) and k (its concurrency, which overrides the queue's
-- laneConcurrency). A field sent with '' is cleared (the hash goes when its last field does);
-- a field not sent stays. Then, since its cap may have risen, the lane returns to ready if it
-- was held and nothing holds it any more, and a worker is woken when it came back with work.
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] the lane's settings lane:<lane>
-- KEYS[4] wake
-- ARGV[1] lane   ARGV[2] replay window ms   ARGV[3] field count N (1..2)
-- ARGV[4..] N pairs: field (w | k), value ('' clears)
-- Returns: 1 when the lane returned to ready with work, else 0; a repeated request returns
--          its first reply.
-- Errors:  EMQ_BAD_ARG for a bad lane name, a settings key not the lane's, an unknown or
--          repeated field or a value out of range (before anything is written).
`,
  `${LANE_ARG_LUA}
local lane = lane_arg(1)
local replay_ttl = int_arg(2, 1, 1000000000000)
local n = int_arg(3, 1, 2)
if #ARGV ~= 3 + 2 * n then refuse('expected ' .. n .. ' field/value pairs from ARGV[4]') end
if KEYS[3] ~= BASE .. 'lane:' .. lane then refuse('KEYS[3] must be the settings key of lane ' .. lane) end
local sets, clears = setting_pairs(4, n, { ${RANGES} }, 'a lane setting (w or k)')

local prior = replayed(KEYS[2])
if prior then return tonumber(prior) end

flow_in_use()
if #sets > 0 then redis.call('HSET', KEYS[3], unpack(sets)) end
-- (Redis deletes a hash with its last field, so a lane without settings leaves no key)
if #clears > 0 then redis.call('HDEL', KEYS[3], unpack(clears)) end
-- The lanes with settings of their own, so lanes() lists them with no work too.
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('SADD', K_CONFIGURED, lane)
else
  redis.call('SREM', K_CONFIGURED, lane)
end
local returned = 0
if try_restore(lane) then
  returned = 1
  wake(KEYS[4])
end
record(KEYS[2], returned, replay_ttl)
return returned
`,
);
