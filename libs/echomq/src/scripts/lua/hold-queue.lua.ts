import { luaScript } from './prelude';
import { THROTTLE_HOLD_MAX_MS } from './throttle.lua';

/**
 * How far past a throttle's longest hold an instant may lie: the masters of a cluster read
 * their own clocks, so an instant taken from one may be a little further off on another.
 */
const CLOCK_SKEW_ALLOWED_MS = 60_000;

export const HOLD_QUEUE_LUA = luaScript(
  `
-- hold queue: no job moves. Holds the queue back for every worker until a server instant, as a
-- throttle of scope 'queue' does (the hold key, read by the claim), keeping a later hold that is
-- already there. A handler's RateLimitedError holds the partition its job ran in (throttle);
-- this holds the other physical queues of the same queue until the same instant. The flow mark
-- is set first (flow_in_use): a claim reads the hold only on a marked (or paused) queue.
-- KEYS[1] fence
-- ARGV[1] until: ms since epoch, server clock (at most one day and a minute ahead)
-- Returns: the end of the hold in force after the call (ms since epoch), 0 when until had passed.
-- Errors:  EMQ_BAD_ARG for an until that is not an integer, or too far ahead (before any write).
`,
  `
local until_ms = int_arg(1, 1, 9007199254740991)
local now = now_ms()
if until_ms - now > ${THROTTLE_HOLD_MAX_MS + CLOCK_SKEW_ALLOWED_MS} then
  refuse('ARGV[1] is more than a day and a minute ahead')
end
if until_ms <= now then return 0 end
local left = redis.call('PTTL', K_HOLD)
-- A later hold stays (its writer set the mark); a hold without expiry (-1) is none the claim honours.
if left > 0 and now + left >= until_ms then return now + left end
flow_in_use()
redis.call('SET', K_HOLD, '1', 'PXAT', until_ms)
return until_ms
`,
);
