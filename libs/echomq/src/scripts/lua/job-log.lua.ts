import { luaScript } from './prelude';

/** Lines a job's row keeps: the newest ones; each new line past this drops the oldest. */
export const JOB_LOG_LINES_KEPT = 100;

/** The longest line job.log() takes, in UTF-8 bytes; a longer one is refused, not cut. */
export const JOB_LOG_LINE_MAX_BYTES = 1_024;

export const JOB_LOG_LUA = luaScript(
  `
-- job log: appends one line to a running job's log (no state change), fenced like progress,
-- so a worker whose claim is stale cannot write into the current claim's log. The lines are
-- fields of the row: 'gn' counts the lines written so far, 'g:<n>' is line n; only the last
-- ${JOB_LOG_LINES_KEPT} are kept (the one that falls out is deleted: O(1) per line), and they go
-- with the row (remove, expiry of a retained row).
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] row emq:{q}:job:<id>
-- ARGV[1] id   ARGV[2] token (attempts)   ARGV[3] claimant   ARGV[4] the line (at most
-- ${JOB_LOG_LINE_MAX_BYTES} bytes)   ARGV[5] replay window ms
-- Returns: the line's number (1 for the first line of the job); a repeated request that
--          succeeded returns the same number and appends nothing.
-- Errors:  EMQ_STALE when the claim is no longer current.
-- Event:   none (a log line is not a transition; readers see it in the job view).
`,
  `
local replay_ttl = int_arg(5, 1, 1000000000000)
if #ARGV[4] > ${JOB_LOG_LINE_MAX_BYTES} then
  refuse('ARGV[4] is longer than ${JOB_LOG_LINE_MAX_BYTES} bytes')
end
local prior = replayed(KEYS[2])
if prior then
  return tonumber(prior)
end
if not holds(KEYS[3], ARGV[2], ARGV[3]) then
  return redis.error_reply('EMQ_STALE')
end
local n = redis.call('HINCRBY', KEYS[3], 'gn', 1)
redis.call('HSET', KEYS[3], 'g:' .. n, ARGV[4])
if n > ${JOB_LOG_LINES_KEPT} then
  redis.call('HDEL', KEYS[3], 'g:' .. (n - ${JOB_LOG_LINES_KEPT}))
end
record(KEYS[2], n, replay_ttl)
return n
`,
);
