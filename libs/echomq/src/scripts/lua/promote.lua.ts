import { luaScript } from './prelude';

export const PROMOTE_LUA = luaScript(
  `
-- promote: schedule -> pending for jobs whose run-at has passed on the server clock.
-- Bounded per call; idempotent.
-- KEYS[1] schedule   KEYS[2] pending   KEYS[3] metrics   KEYS[4] events   KEYS[5] wake
-- ARGV[1] most jobs to promote   ARGV[2] events max length
-- Returns: { promoted, 1 when more due jobs remain else 0 }
`,
  `
local now = now_ms()
local limit = tonumber(ARGV[1])
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, limit)
if #due == 0 then
  return { 0, 0 }
end
for _, id in ipairs(due) do
  redis.call('ZADD', KEYS[2], 0, id)
end
redis.call('ZREM', KEYS[1], unpack(due))
redis.call('HINCRBY', KEYS[3], 'promoted', #due)
emit(KEYS[4], ARGV[2], 'type', 'promoted', 'ids', table.concat(due, ','))
wake(KEYS[5])
local more = 0
if #due == limit and redis.call('ZCOUNT', KEYS[1], '-inf', now) > 0 then more = 1 end
return { #due, more }
`,
);
