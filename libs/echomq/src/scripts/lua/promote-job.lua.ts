import { luaScript } from './prelude';

export const PROMOTE_JOB_LUA = luaScript(
  `
-- promote job: schedule -> pending now, for one job whatever its run-at (promote moves the
-- due ones). It goes into its own lane's pending at its level (row 'l', 'y').
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] schedule   KEYS[4] metrics
-- KEYS[5] events   KEYS[6] wake   KEYS[7] row emq:{q}:job:<id>
-- ARGV[1] id   ARGV[2] events max length   ARGV[3] replay window ms
-- Returns: 1; a repeated request that succeeded returns 1 again.
-- Errors:  EMQ_NOT_FOUND when there is no such job; EMQ_NOT_SCHEDULED when it is not in schedule.
-- Event:   'promoted' with the id.
`,
  `
local id = ARGV[1]
local maxlen = int_arg(2, 1, 1000000000)
local replay_ttl = int_arg(3, 1, 1000000000000)
if replayed(KEYS[2]) then
  return 1
end
if not redis.call('ZSCORE', KEYS[3], id) then
  if redis.call('EXISTS', KEYS[7]) == 1 then
    return redis.error_reply('EMQ_NOT_SCHEDULED')
  end
  return redis.error_reply('EMQ_NOT_FOUND')
end
redis.call('ZREM', KEYS[3], id)
pend_by_row({ id })
redis.call('HINCRBY', KEYS[4], 'promoted', 1)
emit(KEYS[5], maxlen, 'type', 'promoted', 'ids', id)
wake(KEYS[6])
record(KEYS[2], '1', replay_ttl)
return 1
`,
);
