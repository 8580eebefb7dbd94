import { luaScript } from './prelude';

const DAY_MS = 86_400_000;

/**
 * Each settings field's range: rate max / window (rm rw), global and lane concurrency (gc lc),
 * lane rate max / window (lm lw). The wrapper checks the same ranges before sending; the
 * script refuses anything else before writing.
 */
export const FLOW_LIMIT_FIELD_RANGES = {
  rm: { min: 1, max: 1_000_000 },
  rw: { min: 1, max: DAY_MS },
  gc: { min: 1, max: 1_000_000 },
  lc: { min: 1, max: 1_000_000 },
  lm: { min: 1, max: 1_000_000 },
  lw: { min: 1, max: DAY_MS },
} as const;

/** `rm = { 1, 1000000 }, rw = ...`: each settings field's range, as a Lua table. */
const RANGES = Object.entries(FLOW_LIMIT_FIELD_RANGES)
  .map(([field, { min, max }]) => `${field} = { ${min}, ${max} }`)
  .join(', ');

export const SET_LIMITS_LUA = luaScript(
  `
-- set limits (admin): writes the limits every worker of the queue enforces together, in the
-- settings hash: rm rw (rate max / window ms), gc (global concurrency), lc (lane concurrency),
-- lm lw (lane rate max / window ms). A field sent with '' is cleared; a field not sent stays.
-- A rate's max and window are sent together (both values, or both cleared). When the lane
-- rate limit is given, the lanes' rate timers are dropped (the windows they waited for are
-- void). Then, when a lane limit (lc, lm/lw) was given, every held lane that nothing holds
-- back any more returns to ready; a worker is woken when one returned or a claim was waiting
-- for a slot.
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] settings   KEYS[4] wake
-- ARGV[1] replay window ms   ARGV[2] field count N   ARGV[3..] N pairs: field, value ('' clears)
-- Returns: the number of held lanes that returned to ready; a repeated request returns its
--          first reply.
-- Errors:  EMQ_BAD_ARG for an unknown or repeated field, a value out of range, or half a rate
--          (before anything is written).
`,
  `
local replay_ttl = int_arg(1, 1, 1000000000000)
local n = batch_arg(2, 3, 2)
local PAIRS = { rm = 'rw', rw = 'rm', lm = 'lw', lw = 'lm' }
local sets, clears, given = setting_pairs(3, n, { ${RANGES} }, 'a limit field')
for field, other in pairs(PAIRS) do
  if given[field] ~= nil and (given[other] == nil or (given[field] == '') ~= (given[other] == '')) then
    refuse('a rate limit sets both ' .. field .. ' and ' .. other .. ', or clears both')
  end
end

local prior = replayed(KEYS[2])
if prior then return tonumber(prior) end

flow_in_use()
if #sets > 0 then redis.call('HSET', KEYS[3], unpack(sets)) end
if #clears > 0 then redis.call('HDEL', KEYS[3], unpack(clears)) end
-- (settings() is first read here, after the writes, so the lanes are judged by the new caps)
local returned = 0
if given.lm ~= nil then
  -- The lane rate limit changed or went: the windows its timers waited for are void.
  redis.call('DEL', K_TIMERS)
end
-- Only the lane limits decide whether a held lane may run (rate and gc are the claim's).
if given.lc ~= nil or given.lm ~= nil then
  for _, lane in ipairs(redis.call('HKEYS', K_HELD)) do
    if try_restore(lane) then returned = returned + 1 end
  end
end
if redis.call('DEL', K_WAITING) == 1 or returned > 0 then wake(KEYS[4]) end
record(KEYS[2], returned, replay_ttl)
return returned
`,
);
