import { SCRIPT_BATCH_MAX } from '../limits';
import { LANE_ARG_LUA } from './lane-arg';
import { luaScript } from './prelude';
import { REPAIR_EVENT_LUA } from '../repair-lua';

export const REPAIR_LANE_LISTS_LUA = luaScript(
  `
-- repair lane lists (doctor): lanes-configured lists exactly the lanes with settings of their
-- own (a lane:<lane> hash; set-lane keeps the two together), and every paused lane is held
-- (pause-lane holds it; only a resume lets it go), so no claim serves it. For each lane given,
-- with ARGV[1] = 1:
--   configured-without-settings: leaves lanes-configured;
--   settings-not-listed: joins lanes-configured;
--   paused-not-held: held, at every level where it is ready.
-- With 0 nothing is written. Each lane is checked here, at one instant. Idempotent.
-- KEYS[1] fence   KEYS[2] metrics   KEYS[3] events
-- ARGV[1] 1 repair | 0 check   ARGV[2] events max length   ARGV[3..] lanes (1 to ${SCRIPT_BATCH_MAX})
-- Returns: per problem found, { lane, configured-without-settings | settings-not-listed |
--          paused-not-held }.
-- Event:   repairing, 'repaired' kind lane-lists with the lanes mended.
`,
  `${LANE_ARG_LUA}${REPAIR_EVENT_LUA}
local repair = int_arg(1, 0, 1) == 1
local maxlen = maxlen_arg(2)
if #ARGV < 3 or #ARGV > 2 + BATCH_MAX then refuse('expected 1 to ' .. BATCH_MAX .. ' lanes from ARGV[3]') end
for i = 3, #ARGV do lane_arg(i) end
local out = {}
for i = 3, #ARGV do
  local lane = ARGV[i]
  local has_settings = redis.call('EXISTS', BASE .. 'lane:' .. lane) == 1
  local listed = redis.call('SISMEMBER', K_CONFIGURED, lane) == 1
  if listed and not has_settings then
    out[#out + 1] = { lane, 'configured-without-settings' }
    if repair then redis.call('SREM', K_CONFIGURED, lane) end
  elseif has_settings and not listed then
    out[#out + 1] = { lane, 'settings-not-listed' }
    if repair then redis.call('SADD', K_CONFIGURED, lane) end
  end
  if redis.call('SISMEMBER', K_PAUSED, lane) == 1 and redis.call('HEXISTS', K_HELD, lane) == 0 then
    out[#out + 1] = { lane, 'paused-not-held' }
    if repair then
      flow_in_use()
      hold_lane(lane)
    end
  end
end
if repair and #out > 0 then
  bump(KEYS[2], 'repaired', #out)
  local lanes, named = {}, {}
  for _, found in ipairs(out) do
    if not named[found[1]] then
      named[found[1]] = true
      lanes[#lanes + 1] = found[1]
    end
  end
  emit_repaired(KEYS[3], maxlen, 'lane-lists', #out, nil, nil, lanes)
end
return out
`,
);
