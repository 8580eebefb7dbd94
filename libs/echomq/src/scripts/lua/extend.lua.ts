import { luaScript } from './prelude';

export const EXTEND_LUA = luaScript(
  `
-- extend: active -> active with a later lease deadline (the heartbeat), for many jobs at once.
-- Only claims that still hold their job (in active, same token and claimant) are extended,
-- and a deadline only ever moves later (ZADD GT): a heartbeat never undoes a longer lease
-- that a handler asked for.
-- No event: every worker beats every lease/3, and an entry per beat would crowd the capped
-- stream, pushing out the completions that recentCompleted and late waits read. The
-- 'extended' counter in metrics still counts the leases extended.
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] active   KEYS[4] metrics
-- KEYS[5] events (not written: see above)
-- ARGV[1] row prefix emq:{q}:job:   ARGV[2] lease ms   ARGV[3] replay window ms
-- ARGV[4] claim count N   ARGV[5..] N groups of 3: id, token, claimant
-- Returns: { new deadline (ms), then per claim 1 (held; its deadline is at least the new one)
--          or 0 (stale: the lease is lost) }; a repeated request returns its first reply.
`,
  `
local prefix = ARGV[1]
local lease = int_arg(2, 1, 1000000000)
local replay_ttl = int_arg(3, 1, 1000000000000)
local n = batch_arg(4, 5, 3)

local prior = replayed(KEYS[2])
if prior then
  local deadline, flags = string.match(prior, '^(%d+):(%d*)$')
  return flags_from(flags, { tonumber(deadline) })
end

-- First write: a full Redis still extends leases, and jobs running when it filled up keep them.
runs_when_full()
local deadline = now_ms() + lease
local out, flags = { deadline }, {}
local held, stale = 0, 0
for i = 0, n - 1 do
  local base = 5 + i * 3
  local id = ARGV[base]
  if holds(prefix .. id, ARGV[base + 1], ARGV[base + 2]) then
    redis.call('ZADD', KEYS[3], 'XX', 'GT', deadline, id)
    held = held + 1
    flags[#flags + 1] = 1
  else
    stale = stale + 1
    flags[#flags + 1] = 0
  end
  out[#out + 1] = flags[#flags]
end
bump(KEYS[4], 'extended', held)
bump(KEYS[4], 'stale', stale)
record(KEYS[2], deadline .. ':' .. table.concat(flags), replay_ttl)
return out
`,
);
