import { luaScript } from './prelude';

export const PROGRESS_LUA = luaScript(
  `
-- progress: records a running job's progress (no state change), fenced like complete,
-- so a worker whose claim is stale cannot overwrite the current claim's progress.
-- Replay-safe by nature: a repeat writes the same value again.
-- KEYS[1] fence   KEYS[2] events   KEYS[3] row emq:{q}:job:<id>
-- ARGV[1] id   ARGV[2] token (attempts)   ARGV[3] claimant   ARGV[4] progress (JSON)
-- ARGV[5] events max length
-- Returns: 1
-- Errors:  EMQ_STALE when the claim is no longer current.
`,
  `
local maxlen = int_arg(5, 1, 1000000000)
if not holds(KEYS[3], ARGV[2], ARGV[3]) then
  return redis.error_reply('EMQ_STALE')
end
redis.call('HSET', KEYS[3], 'p', ARGV[4])
emit(KEYS[2], maxlen, 'type', 'progress', 'ids', ARGV[1], 'progress', ARGV[4])
return 1
`,
);
