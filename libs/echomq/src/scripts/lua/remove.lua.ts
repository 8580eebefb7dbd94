import { luaScript } from './prelude';

export const REMOVE_LUA = luaScript(
  `
-- remove: any state -> gone. The row and its idempotency key go with it. A claim on a
-- removed active job becomes stale: its heartbeat reports the lease lost (which aborts
-- the handler) and its complete / fail change nothing.
-- KEYS[1] pending   KEYS[2] active   KEYS[3] schedule   KEYS[4] dead   KEYS[5] metrics
-- KEYS[6] events    KEYS[7] row emq:{q}:job:<id>       KEYS[8] idempotency prefix emq:{q}:idem:
-- ARGV[1] id   ARGV[2] events max length
-- Returns: the state the job was in: pending | active | schedule | dead | completed
-- Errors:  EMQ_NOT_FOUND when there is no such job.
`,
  `
local id = ARGV[1]
local states = { 'pending', 'active', 'schedule', 'dead' }
local was = false
for i = 1, 4 do
  if redis.call('ZREM', KEYS[i], id) == 1 then was = states[i] end
end
local exists = redis.call('EXISTS', KEYS[7]) == 1
if not was and not exists then
  return redis.error_reply('EMQ_NOT_FOUND')
end
if not was then was = 'completed' end
local idem = redis.call('HGET', KEYS[7], 'k')
if idem and redis.call('GET', KEYS[8] .. idem) == id then
  redis.call('DEL', KEYS[8] .. idem)
end
redis.call('DEL', KEYS[7])
redis.call('HINCRBY', KEYS[5], 'removed', 1)
emit(KEYS[6], ARGV[2], 'type', 'removed', 'ids', id, 'from', was)
return was
`,
);
