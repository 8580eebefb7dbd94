import { luaScript } from './prelude';

export const FAIL_LUA = luaScript(
  `
-- fail: active -> schedule (retry after a backoff), -> pending (retry now), or -> dead
-- (the retry budget is spent, or the error is unrecoverable). The error is kept on the row.
-- KEYS[1] active   KEYS[2] pending   KEYS[3] schedule   KEYS[4] dead   KEYS[5] metrics
-- KEYS[6] events   KEYS[7] wake      KEYS[8] row emq:{q}:job:<id>
-- ARGV[1] id   ARGV[2] token (attempts)   ARGV[3] claimant   ARGV[4] error text
-- ARGV[5] backoff ms before the retry   ARGV[6] 1 when unrecoverable   ARGV[7] events max length
-- Returns: { 'schedule', run-at ms } | { 'pending', 0 } | { 'dead', 0 }
-- Errors:  EMQ_STALE as for complete.
`,
  `
local id = ARGV[1]
local row = KEYS[8]
if not holds(row, ARGV[2], ARGV[3]) then
  redis.call('HINCRBY', KEYS[5], 'stale', 1)
  return redis.error_reply('EMQ_STALE')
end
local now = now_ms()
redis.call('ZREM', KEYS[1], id)
redis.call('HSET', row, 'e', ARGV[4])
redis.call('HDEL', row, 'c')
local max = tonumber(redis.call('HGET', row, 'm')) or 1
if ARGV[6] == '1' or spent(row) >= max then
  redis.call('ZADD', KEYS[4], 0, id)
  redis.call('HINCRBY', KEYS[5], 'dead', 1)
  emit(KEYS[6], ARGV[7], 'type', 'dead', 'ids', id, 'attempt', ARGV[2], 'error', ARGV[4])
  return { 'dead', 0 }
end
local backoff = tonumber(ARGV[5])
redis.call('HINCRBY', KEYS[5], 'failed', 1)
emit(KEYS[6], ARGV[7], 'type', 'failed', 'ids', id, 'attempt', ARGV[2], 'error', ARGV[4])
wake(KEYS[7])
if backoff > 0 then
  redis.call('ZADD', KEYS[3], now + backoff, id)
  return { 'schedule', now + backoff }
end
redis.call('ZADD', KEYS[2], 0, id)
return { 'pending', 0 }
`,
);
