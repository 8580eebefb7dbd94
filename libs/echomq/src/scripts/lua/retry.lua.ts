import { luaScript } from './prelude';

export const RETRY_LUA = luaScript(
  `
-- retry: dead -> pending with a fresh retry budget. attempts is not reset (it is the
-- fencing token and never decreases); the budget base moves up to it instead.
-- KEYS[1] dead   KEYS[2] pending   KEYS[3] metrics   KEYS[4] events   KEYS[5] wake
-- KEYS[6] row emq:{q}:job:<id>
-- ARGV[1] id   ARGV[2] events max length
-- Returns: 1
-- Errors:  EMQ_NOT_FOUND when there is no such job; EMQ_NOT_DEAD when it is not in dead.
`,
  `
local id = ARGV[1]
if not redis.call('ZSCORE', KEYS[1], id) then
  if redis.call('EXISTS', KEYS[6]) == 1 then
    return redis.error_reply('EMQ_NOT_DEAD')
  end
  return redis.error_reply('EMQ_NOT_FOUND')
end
redis.call('ZREM', KEYS[1], id)
redis.call('ZADD', KEYS[2], 0, id)
redis.call('HSET', KEYS[6], 'b', redis.call('HGET', KEYS[6], 'a') or '0')
redis.call('HINCRBY', KEYS[3], 'retried', 1)
emit(KEYS[4], ARGV[2], 'type', 'retried', 'ids', id)
wake(KEYS[5])
return 1
`,
);
