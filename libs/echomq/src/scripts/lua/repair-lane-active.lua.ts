import { luaScript } from './prelude';
import { REPAIR_EVENT_LUA } from '../repair-lua';

/** Most active jobs one recount reads (one HGET each): beyond this the recount is not made. */
export const LANE_RECOUNT_MAX = 2_000;

export const REPAIR_LANE_ACTIVE_LUA = luaScript(
  `
-- repair lane active (doctor): lane-active[lane] must be the lane's jobs in active (what
-- laneConcurrency counts), the default lane's only once the queue has the flow mark (see
-- flow_in_use). Recounted here from the active set and each member's row 'l', at one instant;
-- a member without a row belongs to no lane (as reap counts it). With ARGV[1] = 1 every lane
-- whose count differs gets the recount (a count of 0 is no field), and a lane its cap held back
-- returns when nothing holds it any more, waking a worker. With 0 nothing is written.
-- Idempotent. Bounded: with more than ARGV[2] jobs in active nothing is read.
-- KEYS[1] fence   KEYS[2] active   KEYS[3] metrics   KEYS[4] events   KEYS[5] wake
-- ARGV[1] 1 repair | 0 check   ARGV[2] events max length
-- ARGV[3] most active jobs to recount (1 to ${LANE_RECOUNT_MAX})
-- Returns: { 1 when recounted (0: too many active jobs), jobs in active,
--            per lane that differs: lane, its count, the recount (flat, 3 values a lane) }.
-- Event:   repairing, 'repaired' kind lane-active with the lanes recounted.
`,
  `${REPAIR_EVENT_LUA}
local repair = int_arg(1, 0, 1) == 1
local maxlen = maxlen_arg(2)
local most = int_arg(3, 1, ${LANE_RECOUNT_MAX})
local size = redis.call('ZCARD', KEYS[2])
if size > most then return { 0, size } end
local recount = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local row = ROW_PREFIX .. id
  if redis.call('EXISTS', row) == 1 then
    local lane = place(redis.call('HGET', row, 'l'))
    if counted(lane) then recount[lane] = (recount[lane] or 0) + 1 end
  end
end
local stored, lanes = {}, {}
local flat = redis.call('HGETALL', K_LANE_ACTIVE)
for i = 1, #flat, 2 do
  stored[flat[i]] = tonumber(flat[i + 1]) or 0
  lanes[#lanes + 1] = flat[i]
end
for lane in pairs(recount) do
  if stored[lane] == nil then lanes[#lanes + 1] = lane end
end
table.sort(lanes)
local out = { 1, size }
local woke, mended = false, {}
for _, lane in ipairs(lanes) do
  local want, have = recount[lane] or 0, stored[lane] or 0
  if want ~= have or (stored[lane] ~= nil and want == 0) then
    out[#out + 1] = lane
    out[#out + 1] = have
    out[#out + 1] = want
    if repair then
      mended[#mended + 1] = lane
      if want == 0 then
        redis.call('HDEL', K_LANE_ACTIVE, lane)
      else
        redis.call('HSET', K_LANE_ACTIVE, lane, want)
      end
      if flow_on() and try_restore(lane) then woke = true end
    end
  end
end
if repair and #out > 2 then
  if woke then wake(KEYS[5]) end
  bump(KEYS[3], 'repaired', #mended)
  emit_repaired(KEYS[4], maxlen, 'lane-active', #mended, nil, nil, mended)
end
return out
`,
);
