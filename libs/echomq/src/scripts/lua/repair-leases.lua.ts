import { SCRIPT_BATCH_MAX } from '../limits';
import { luaScript } from './prelude';
import { REPAIR_EVENT_LUA } from '../repair-lua';

/**
 * The longest lease any script sets: claim and extend take a lease of at most this many ms
 * (their int_arg bound), and extend never shortens one. A deadline further ahead than now plus
 * this (and LEASE_SKEW_MS) was written by no transition.
 */
export const LEASE_CEILING_MS = 1_000_000_000;

/** Room for the server clock stepping back across a failover (docs/model.md allows 200 ms). */
export const LEASE_SKEW_MS = 60_000;

export const REPAIR_LEASES_LUA = luaScript(
  `
-- repair leases (doctor): the active set's scores (lease deadlines) against the server's
-- clock, read here at one instant. Expired: a deadline more than ARGV[3] ms past, due for
-- reaping and not reaped (every reaper tick returns expired leases); reported only, since
-- their repair is the reaper's own transition (reap.lua.ts). Far-future: a deadline past now +
-- ${LEASE_CEILING_MS} + ${LEASE_SKEW_MS} ms, further ahead than any claim or extend sets, so no reap would
-- ever return the job if its worker died (a score written in other units, or +inf). With
-- ARGV[1] = 1 the deadline of each far-future job (up to ${SCRIPT_BATCH_MAX} a call, the soonest
-- first) becomes now: the next reap returns it, unless a live holder's heartbeat renews the
-- lease first. With 0 nothing is written. Idempotent.
-- KEYS[1] fence   KEYS[2] active   KEYS[3] metrics   KEYS[4] events
-- ARGV[1] 1 repair | 0 check   ARGV[2] events max length   ARGV[3] grace ms (0 to 3600000)
-- ARGV[4] ids listed per kind (1 to 1000)
-- Returns: { now, expired count, { id, deadline, ... } of the first expired (soonest first),
--            far-future count, { id, deadline, ... } of the first far-future, far-future
--            deadlines set to now }.
-- Event:   repairing, 'repaired' kind lease-far-future with the ids (to: active).
`,
  `${REPAIR_EVENT_LUA}
local repair = int_arg(1, 0, 1) == 1
local maxlen = maxlen_arg(2)
local grace = int_arg(3, 0, 3600000)
local shown = int_arg(4, 1, 1000)
local now = now_ms()
local before = now - grace
local beyond = '(' .. (now + ${LEASE_CEILING_MS} + ${LEASE_SKEW_MS})
local expired = redis.call('ZCOUNT', KEYS[2], '-inf', before)
local expired_shown = {}
if expired > 0 then
  expired_shown = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', before, 'WITHSCORES', 'LIMIT', 0, shown)
end
local far = redis.call('ZCOUNT', KEYS[2], beyond, '+inf')
local far_shown, mended = {}, {}
if far > 0 then
  far_shown = redis.call('ZRANGEBYSCORE', KEYS[2], beyond, '+inf', 'WITHSCORES', 'LIMIT', 0, shown)
  if repair then
    mended = redis.call('ZRANGEBYSCORE', KEYS[2], beyond, '+inf', 'LIMIT', 0, BATCH_MAX)
    local to = {}
    for i, id in ipairs(mended) do
      redis.call('ZADD', KEYS[2], 'XX', now, id)
      to[i] = 'active'
    end
    bump(KEYS[3], 'repaired', #mended)
    emit_repaired(KEYS[4], maxlen, 'lease-far-future', #mended, mended, to)
  end
end
return { now, expired, expired_shown, far, far_shown, #mended }
`,
);
