import { luaScript } from './prelude';

export const COMPLETE_LUA = luaScript(
  `
-- complete: active -> completed. The row is deleted, or kept for ARGV[5] ms with its
-- result, in no set (its state then reads 'completed').
-- KEYS[1] active   KEYS[2] metrics   KEYS[3] events   KEYS[4] row emq:{q}:job:<id>
-- ARGV[1] id   ARGV[2] token (attempts)   ARGV[3] claimant   ARGV[4] result (JSON, '' none)
-- ARGV[5] keep ms (0 deletes the row)   ARGV[6] events max length
-- Returns: 1
-- Errors:  EMQ_STALE when the job is not in active or the token / claimant do not match
--          (nothing changes but the 'stale' counter).
`,
  `
local id = ARGV[1]
if not holds(KEYS[1], KEYS[4], id, ARGV[2], ARGV[3]) then
  redis.call('HINCRBY', KEYS[2], 'stale', 1)
  return redis.error_reply('EMQ_STALE')
end
local now = now_ms()
redis.call('ZREM', KEYS[1], id)
local keep = tonumber(ARGV[5])
if keep > 0 then
  redis.call('HSET', KEYS[4], 'r', ARGV[4], 'f', now)
  redis.call('HDEL', KEYS[4], 'c')
  redis.call('PEXPIRE', KEYS[4], keep)
else
  redis.call('DEL', KEYS[4])
end
redis.call('HINCRBY', KEYS[2], 'completed', 1)
emit(KEYS[3], ARGV[6], 'type', 'completed', 'id', id, 'attempt', ARGV[2], 'result', ARGV[4])
return 1
`,
);
