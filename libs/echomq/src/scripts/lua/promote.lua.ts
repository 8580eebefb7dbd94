import { luaScript } from './prelude';

export const PROMOTE_LUA = luaScript(
  `
-- promote: schedule -> pending for jobs whose run-at has passed on the server clock.
-- Bounded per call; idempotent (a repeat moves only what is still due). Each job goes into
-- its own lane's pending at its level (row 'l', 'y'; see promote_due). Also offers the
-- default lane for jobs an older version put in pending (adopt_plain_pending).
-- KEYS[1] fence   KEYS[2] schedule   KEYS[3] pending (the default lane's at level 0; other
-- lanes' pending sets are composed from the base)   KEYS[4] metrics   KEYS[5] events
-- KEYS[6] wake
-- ARGV[1] most jobs to promote   ARGV[2] events max length
-- Returns: { promoted, 1 when more due jobs remain else 0 }
-- Event:   'promoted' with the ids promoted.
`,
  `
local limit = int_arg(1, 1, BATCH_MAX)
local maxlen = int_arg(2, 1, 1000000000)
local now = now_ms()
local due = promote_due(KEYS[2], limit, now)
if adopt_plain_pending() then wake(KEYS[6]) end
if #due == 0 then
  return { 0, 0 }
end
redis.call('HINCRBY', KEYS[4], 'promoted', #due)
emit(KEYS[5], maxlen, 'type', 'promoted', 'ids', table.concat(due, ','))
wake(KEYS[6])
local more = 0
if #due == limit and redis.call('ZCOUNT', KEYS[2], '-inf', now) > 0 then more = 1 end
return { #due, more }
`,
);
