import { luaScript } from './prelude';

export const REAP_LUA = luaScript(
  `
-- reap: active -> pending (attempts left in the budget) or -> dead (none left), for
-- leases whose deadline has passed on the server clock. Bounded per call; idempotent
-- (a repeat moves only what is still expired), so any number of reapers may run at once.
-- The budget is the row's: the job's own 'm', else the claiming worker's 'w' (see claim), so
-- a reaper decides as the serving worker would without knowing its options.
-- Each reaped job is counted out of its lane's active jobs (the lane's count is reconciled:
-- a crashed worker's jobs free their lane's cap here) and goes back into its own lane's
-- pending at its level (row 'l', 'y'). With nothing left in active, lane-active is reset
-- (every count is 0 then, whatever drift came before) and held lanes may return.
-- Each reaped row is marked a crash suspect ('x' = 1): its worker may have died of it, so
-- claims hand it out only alone (see claim); a settled attempt (complete, fail, throttle)
-- clears the mark. A job reaped into dead keeps it, so a retry from dead runs it alone too.
-- KEYS[1] fence   KEYS[2] active   KEYS[3] pending (the default lane's at level 0; other
-- lanes' pending sets are composed from the base)   KEYS[4] dead   KEYS[5] metrics
-- KEYS[6] events   KEYS[7] wake
-- ARGV[1] row prefix emq:{q}:job:   ARGV[2] most leases to reap   ARGV[3] events max length
-- ARGV[4] most jobs dead keeps   ARGV[5] most age of a dead job since enqueue, ms (0: none);
-- dead is trimmed oldest first as jobs go in (into_dead)
-- Returns: { moved to pending, moved to dead, 1 when more expired leases remain else 0 }
-- Event:   'reaped' with the ids moved to pending; 'dead' with the ids moved to dead and
--          the error 'lease expired'; then 'trimmed' with the ids dead let go, if any.
`,
  `
local prefix = ARGV[1]
local limit = int_arg(2, 1, BATCH_MAX)
local maxlen = int_arg(3, 1, 1000000000)
local dead_rules = dead_limits(4)
local now = now_ms()
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, limit)
local to_pending, to_dead = {}, {}
local gone = leaving()
local orphans = 0
for _, id in ipairs(expired) do
  local row = prefix .. id
  redis.call('ZREM', KEYS[2], id)
  local f = redis.call('HMGET', row, 'a', 'm', 'b', 'w', 'l')
  if not f[1] and not f[2] and not f[4] then
    orphans = orphans + 1
  else
    gone.add(place(f[5]))
    redis.call('HSET', row, 'e', 'lease expired during attempt ' .. (f[1] or '0'), 'x', 1)
    -- The stack of an earlier attempt's error would not belong to this one.
    redis.call('HDEL', row, 'c', 'es')
    if (tonumber(f[1]) or 0) - (tonumber(f[3]) or 0) >= budget(f[2], f[4]) then
      to_dead[#to_dead + 1] = id
    else
      to_pending[#to_pending + 1] = id
    end
  end
end
gone.settle(KEYS[7])
if #to_pending > 0 then
  pend_by_row(to_pending)
  redis.call('HINCRBY', KEYS[5], 'reaped', #to_pending)
  emit(KEYS[6], maxlen, 'type', 'reaped', 'ids', table.concat(to_pending, ','))
  wake(KEYS[7])
end
if #to_dead > 0 then
  redis.call('HINCRBY', KEYS[5], 'dead', #to_dead)
  emit(KEYS[6], maxlen, 'type', 'dead', 'ids', table.concat(to_dead, ','), 'error', 'lease expired')
  into_dead(KEYS[4], KEYS[5], KEYS[6], maxlen, to_dead, dead_rules, now)
end
bump(KEYS[5], 'orphans', orphans)
-- The reaper reconciles the lane counts: with nothing in active every count is 0, whatever
-- drift came before (an orphan above, whose lane its missing row cannot tell; a settle by an
-- older version), and a lane its cap held returns.
if redis.call('EXISTS', KEYS[2]) == 0 and redis.call('EXISTS', K_LANE_ACTIVE) == 1 then
  redis.call('DEL', K_LANE_ACTIVE)
  local restored = false
  for _, lane in ipairs(redis.call('HKEYS', K_HELD)) do
    if try_restore(lane) then restored = true end
  end
  if restored then wake(KEYS[7]) end
end
local more = 0
if #expired == limit and redis.call('ZCOUNT', KEYS[2], '-inf', now) > 0 then more = 1 end
return { #to_pending, #to_dead, more }
`,
);
