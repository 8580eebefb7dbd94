import { luaScript } from './prelude';

export const REAP_LUA = luaScript(
  `
-- reap: active -> pending (attempts left in the budget) or -> dead (none left), for
-- leases whose deadline has passed on the server clock. Bounded per call; idempotent,
-- so any number of reapers may run at once.
-- KEYS[1] active   KEYS[2] pending   KEYS[3] dead   KEYS[4] metrics   KEYS[5] events
-- KEYS[6] wake     KEYS[7] row prefix emq:{q}:job:
-- ARGV[1] most leases to reap   ARGV[2] events max length
-- Returns: { moved to pending, moved to dead, 1 when more expired leases remain else 0 }
`,
  `
local now = now_ms()
local limit = tonumber(ARGV[1])
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, limit)
local to_pending, to_dead = {}, {}
for _, id in ipairs(expired) do
  local row = KEYS[7] .. id
  redis.call('ZREM', KEYS[1], id)
  if redis.call('EXISTS', row) == 0 then
    redis.call('HINCRBY', KEYS[4], 'orphans', 1)
  else
    local f = redis.call('HMGET', row, 'a', 'm')
    redis.call('HSET', row, 'e', 'lease expired during attempt ' .. (f[1] or '0'))
    redis.call('HDEL', row, 'c')
    if spent(row) >= (tonumber(f[2]) or 1) then
      redis.call('ZADD', KEYS[3], 0, id)
      to_dead[#to_dead + 1] = id
    else
      redis.call('ZADD', KEYS[2], 0, id)
      to_pending[#to_pending + 1] = id
    end
  end
end
if #to_pending > 0 then
  redis.call('HINCRBY', KEYS[4], 'reaped', #to_pending)
  emit(KEYS[5], ARGV[2], 'type', 'reaped', 'ids', table.concat(to_pending, ','))
  wake(KEYS[6])
end
if #to_dead > 0 then
  redis.call('HINCRBY', KEYS[4], 'dead', #to_dead)
  emit(KEYS[5], ARGV[2], 'type', 'dead', 'ids', table.concat(to_dead, ','), 'error', 'lease expired')
end
local more = 0
if #expired == limit and redis.call('ZCOUNT', KEYS[1], '-inf', now) > 0 then more = 1 end
return { #to_pending, #to_dead, more }
`,
);
