import { luaScript } from './prelude';

export const RETRY_LUA = luaScript(
  `
-- retry: dead -> pending with a fresh retry budget. attempts is not reset (it is the
-- fencing token and never decreases); the budget base moves up to it instead. The budget's
-- size is untouched: the job's own 'm', or else the next claim's worker's (it rewrites 'w').
-- The job goes into its own lane's pending at its level (row 'l', 'y'). A crash suspect ('x':
-- reaped into dead) stays one, so its first attempt after the retry runs alone (see claim).
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] dead   KEYS[4] pending (the
-- default lane's at level 0; other lanes' pending sets are composed from the base)
-- KEYS[5] metrics   KEYS[6] events   KEYS[7] wake   KEYS[8] row emq:{q}:job:<id>
-- ARGV[1] id   ARGV[2] events max length   ARGV[3] replay window ms
-- Returns: 1; a repeated request that succeeded returns 1 again.
-- Errors:  EMQ_NOT_FOUND when there is no such job; EMQ_NOT_DEAD when it is not in dead.
-- Event:   'retried' with the id.
`,
  `
local id = ARGV[1]
local maxlen = int_arg(2, 1, 1000000000)
local replay_ttl = int_arg(3, 1, 1000000000000)
if replayed(KEYS[2]) then
  return 1
end
if not redis.call('ZSCORE', KEYS[3], id) then
  if redis.call('EXISTS', KEYS[8]) == 1 then
    return redis.error_reply('EMQ_NOT_DEAD')
  end
  return redis.error_reply('EMQ_NOT_FOUND')
end
local f = redis.call('HMGET', KEYS[8], 'a', 'l', 'y')
local lane, level = place(f[2], f[3])
redis.call('ZREM', KEYS[3], id)
into_pending(lane, level, { id })
redis.call('HSET', KEYS[8], 'b', f[1] or '0')
redis.call('HINCRBY', KEYS[5], 'retried', 1)
emit(KEYS[6], maxlen, 'type', 'retried', 'ids', id)
wake(KEYS[7])
record(KEYS[2], '1', replay_ttl)
return 1
`,
);
