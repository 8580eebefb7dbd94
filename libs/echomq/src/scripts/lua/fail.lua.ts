import { luaScript } from './prelude';

export const FAIL_LUA = luaScript(
  `
-- fail: active -> schedule (retry after a backoff), -> pending (retry now), or -> dead
-- (the retry budget is spent, or the error is unrecoverable). The error is kept on the row.
-- The budget is the row's: the job's own 'm', else the claiming worker's 'w' (see claim).
-- A retry now goes into the job's own lane's pending at its level (row 'l', 'y'); the job is
-- counted out of its lane's active jobs either way (see leaving()). The attempt ended in its
-- handler, so the job did not crash its worker: its crash-suspect mark ('x', see reap) goes.
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] active   KEYS[4] pending (the
-- default lane's at level 0; other lanes' pending sets are composed from the base)
-- KEYS[5] schedule   KEYS[6] dead   KEYS[7] metrics   KEYS[8] events   KEYS[9] wake
-- KEYS[10] row emq:{q}:job:<id>
-- ARGV[1] id   ARGV[2] token (attempts)   ARGV[3] claimant   ARGV[4] error text
-- ARGV[5] backoff ms before the retry   ARGV[6] 1 when unrecoverable   ARGV[7] events max length
-- ARGV[8] replay window ms   ARGV[9] most jobs dead keeps   ARGV[10] most age of a dead job
-- since enqueue, ms (0: none); dead is trimmed oldest first as the job goes in (into_dead)
-- ARGV[11] the error's stack trace ('' when it has none: the row's 'es' goes, so it never
-- belongs to an earlier attempt's error); kept cut to ERROR_STACK_MAX, never in events
-- Returns: { 'schedule', run-at ms } | { 'pending', 0 } | { 'dead', 0 }; a repeated request
--          returns its first reply (a refusal too).
-- Errors:  EMQ_STALE as for complete.
-- Event:   'failed' (a retry follows) or 'dead', with the attempt and the error (cut to 1 KiB);
--          then 'trimmed' with the ids dead let go, if any.
`,
  `
local id, token, claimant = ARGV[1], ARGV[2], ARGV[3]
local backoff = int_arg(5, 0, 1000000000000)
local maxlen = int_arg(7, 1, 1000000000)
local replay_ttl = int_arg(8, 1, 1000000000000)
local dead_rules = dead_limits(9)
local row = KEYS[10]

local prior = replayed(KEYS[2])
if prior then
  if prior == 'stale' then return redis.error_reply('EMQ_STALE') end
  local state, run_at = string.match(prior, '^(%a+):(%d+)$')
  return { state, tonumber(run_at) }
end
-- First write: a full Redis still fails jobs (a retry or dead keeps the row it had).
runs_when_full()
local held, l, y = holds(row, token, claimant)
if not held then
  redis.call('HINCRBY', KEYS[7], 'stale', 1)
  record(KEYS[2], 'stale', replay_ttl)
  return redis.error_reply('EMQ_STALE')
end

local now = now_ms()
local lane, level = place(l, y)
local error_text = row_error(ARGV[4])
redis.call('ZREM', KEYS[3], id)
local gone = leaving()
gone.add(lane)
gone.settle(KEYS[9])
redis.call('HSET', row, 'e', error_text)
if ARGV[11] == '' then
  redis.call('HDEL', row, 'c', 'x', 'es')
else
  redis.call('HSET', row, 'es', string.sub(ARGV[11], 1, ERROR_STACK_MAX))
  redis.call('HDEL', row, 'c', 'x')
end
local own = redis.call('HMGET', row, 'm', 'w')
local max = budget(own[1], own[2])
local reply
if ARGV[6] == '1' or spent(row) >= max then
  redis.call('HINCRBY', KEYS[7], 'dead', 1)
  emit(KEYS[8], maxlen, 'type', 'dead', 'ids', id, 'attempt', token, 'error', event_error(error_text))
  into_dead(KEYS[6], KEYS[7], KEYS[8], maxlen, { id }, dead_rules, now)
  reply = { 'dead', 0 }
else
  redis.call('HINCRBY', KEYS[7], 'failed', 1)
  emit(KEYS[8], maxlen, 'type', 'failed', 'ids', id, 'attempt', token, 'error', event_error(error_text))
  wake(KEYS[9])
  if backoff > 0 then
    redis.call('ZADD', KEYS[5], now + backoff, id)
    reply = { 'schedule', now + backoff }
  else
    into_pending(lane, level, { id })
    reply = { 'pending', 0 }
  end
end
record(KEYS[2], reply[1] .. ':' .. reply[2], replay_ttl)
return reply
`,
);
