import { luaScript } from './prelude';

/**
 * Approximate cap on a queue's cancels stream: workers follow it live, so only entries
 * written while a reader was away matter, and a missed one is still caught by the next
 * heartbeat (it finds the lease lost).
 */
export const CANCELS_MAX_LEN = 1_000;

export const REMOVE_LUA = luaScript(
  `
-- remove: any state -> gone. The row and its idempotency key go with it. A claim on a
-- removed active job becomes stale: its id and token go on the cancels stream, which the
-- worker running it follows, so its handler is aborted at once (its next heartbeat, which
-- reports the lease lost, is the fallback), and its complete / fail change nothing. A pending job leaves its own lane's
-- pending set (row 'l', 'y'), and the lane leaves ready at that level when it has no work
-- left there; an active job is counted out of its lane's active jobs (see leaving()).
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] pending (the default lane's at
-- level 0; other lanes' pending sets are composed from the base)   KEYS[4] active
-- KEYS[5] schedule   KEYS[6] dead   KEYS[7] metrics   KEYS[8] events   KEYS[9] row emq:{q}:job:<id>
-- KEYS[10] wake   (the cancels stream is composed from the base, as the lanes' pending sets are)
-- ARGV[1] id   ARGV[2] idempotency prefix emq:{q}:idem:   ARGV[3] events max length
-- ARGV[4] replay window ms
-- Returns: the state the job was in: pending | active | schedule | dead | completed (a
--          finished row) | orphan (a row in no set that never finished); a repeated request
--          that succeeded returns the same state.
-- Errors:  EMQ_NOT_FOUND when there is no such job.
-- Event:   'removed' with the id and from (the state it was in); for an active job also
--          an entry on cancels: id, attempt (the token of the claim to abort).
`,
  `
local id = ARGV[1]
local maxlen = int_arg(3, 1, 1000000000)
local replay_ttl = int_arg(4, 1, 1000000000000)
local prior = replayed(KEYS[2])
if prior then
  return prior
end
local f = redis.call('HMGET', KEYS[9], 'k', 'f', 'l', 'y', 'a')
local lane, level = place(f[3], f[4])
local states = { 'pending', 'active', 'schedule', 'dead' }
local sets = { pending_key(level, lane), KEYS[4], KEYS[5], KEYS[6] }
local was = false
for i = 1, 4 do
  if redis.call('ZREM', sets[i], id) == 1 then was = states[i] end
end
if was == 'pending' then
  drained(lane, level)
elseif was == 'active' then
  local gone = leaving()
  gone.add(lane)
  gone.settle(KEYS[10])
  emit(BASE .. 'cancels', ${CANCELS_MAX_LEN}, 'id', id, 'attempt', f[5] or '0')
end
-- (not 'm': a job enqueued without a budget of its own has none)
if not was and redis.call('EXISTS', KEYS[9]) == 0 then
  return redis.error_reply('EMQ_NOT_FOUND')
end
if not was then was = f[2] and 'completed' or 'orphan' end
local idem = f[1]
if idem and redis.call('GET', ARGV[2] .. idem) == id then
  redis.call('DEL', ARGV[2] .. idem)
end
redis.call('DEL', KEYS[9])
redis.call('HINCRBY', KEYS[7], 'removed', 1)
emit(KEYS[8], maxlen, 'type', 'removed', 'ids', id, 'from', was)
record(KEYS[2], was, replay_ttl)
return was
`,
);
