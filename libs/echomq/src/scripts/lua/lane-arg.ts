/**
 * Lua for the lane admin scripts (set-lane, pause-lane, resume-lane): the lane argument,
 * checked as keyspace/lane-name.ts checks it, since the name becomes part of keys. Put at the
 * top of a script's body (after the prelude and FLOW_PRELUDE).
 */
export const LANE_ARG_LUA = `
-- ARGV[i] as a lane name (1..64 of A-Z a-z 0-9 _ . : @ + = -), or the call is refused.
local function lane_arg(i)
  local lane = ARGV[i]
  if not lane or #lane > 64 or not string.find(lane, '^[%w_.:@+=-]+$') then
    refuse('ARGV[' .. i .. '] must be a lane name: 1 to 64 of A-Z a-z 0-9 _ . : @ + = -')
  end
  return lane
end
`;
