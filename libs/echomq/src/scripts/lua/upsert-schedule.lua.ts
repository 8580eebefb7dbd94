import { TRACE_CONTEXT_MAX_BYTES } from '../limits';
import { luaScript } from './prelude';
import { SCHEDULE_OCCURRENCE_LUA } from './schedule-occurrence.lua';

export const UPSERT_SCHEDULE_LUA = luaScript(
  `
-- upsert-schedule: writes a schedule's definition and makes sure it has exactly one next
-- occurrence, deciding from where the current one (scheduler-next) is now:
--   waiting (in the schedule set, never claimed): the same definition is 'unchanged' (nothing
--     written); another one replaces it (ZREM + DEL row) with a new occurrence from the new
--     template. With the same timing (cron and tz, or everyMs) the new one keeps the old one's
--     run-at and planned run-at, so a new template or missed policy never moves (or repeats)
--     a run; with new timing it takes ARGV[5].
--   pending or ran (promoted, active, retrying, dead, retained): that run goes on and its
--     advance (at claim, or the reapers' sweep) creates the next occurrence from whatever
--     definition is stored then. The same definition is 'unchanged'; another one is written,
--     and nothing else.
--   gone (no row), or no next occurrence: a new occurrence at ARGV[5].
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] schedule   KEYS[4] schedulers
-- KEYS[5] scheduler-next   KEYS[6] metrics   KEYS[7] events   KEYS[8] wake
-- (lane pending sets are composed from the queue's base, see flow.ts)
-- ARGV[1] row prefix emq:{q}:job:   ARGV[2] schedule key   ARGV[3] definition (canonical JSON)
-- ARGV[4] id of a new occurrence   ARGV[5] its run-at (ms) when it does not keep the old one's,
-- computed by the caller from server time   ARGV[6] events max length   ARGV[7] replay window ms
-- ARGV[8] the caller's trace context ('' or absent: none; at most ${TRACE_CONTEXT_MAX_BYTES} bytes), kept
-- as 'tc' on a new occurrence (and passed on from it to the next by advance-schedule)
-- Returns: { 'created' | 'updated' | 'unchanged', id of the next occurrence (the one going on
--          when a run is in progress), its run-at ms (its planned run-at when not waiting) };
--          a repeated request returns the first reply ('unchanged' included).
-- Errors:  EMQ_EXISTS <id> when a new occurrence is due and its id already has a row (nothing
--          written). A full Redis (noeviction) refuses 'created' and 'updated' before any
--          write, and lets 'unchanged' (its reply record only) through.
-- Events:  'removed' (from schedule) for a replaced occurrence, 'enqueued' with a new id,
--          'schedule-upserted' with the next occurrence's id, the key and the outcome (none
--          when 'unchanged').
`,
  `${SCHEDULE_OCCURRENCE_LUA}
local prefix, key, text, id = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local run_at = int_arg(5, 1, 1000000000000000)
local maxlen = int_arg(6, 1, 1000000000)
local replay_ttl = int_arg(7, 1, 1000000000000)
local trace = ARGV[8] or ''
if #trace > ${TRACE_CONTEXT_MAX_BYTES} then
  refuse('ARGV[8] must be a trace context of at most ${TRACE_CONTEXT_MAX_BYTES} bytes')
end
local def = decode_definition(text, 'ARGV[3]')
local prior = replayed(KEYS[2])
if prior then
  local outcome, prior_id, prior_at = string.match(prior, '^(%S+) (%S+) (%S+)$')
  return { outcome, prior_id, tonumber(prior_at) }
end
local function answer(outcome, next_id, at)
  record(KEYS[2], outcome .. ' ' .. next_id .. ' ' .. at, replay_ttl)
  return { outcome, next_id, at }
end
local stored = redis.call('HGET', KEYS[4], key)
local old = redis.call('HGET', KEYS[5], key)
local where, old_planned, old_at = 'gone', nil, nil
if old then where, old_planned, old_at = occurrence_at(prefix, KEYS[3], old) end
local outcome = stored and 'updated' or 'created'
-- A run in progress: the definition only (its advance makes the next occurrence from it).
local running = where == 'pending' or where == 'ran'
local at_of_old = running and (tonumber(old_planned) or 0) or old_at
if stored == text and (where == 'waiting' or running) then
  -- Recorded although nothing changed: a repeat after a newer upsert must not write this one.
  -- Nothing grows but that record, so a full Redis lets it through: a worker whose declared
  -- schedules did not change boots on a full Redis without waiting for room.
  runs_when_full()
  return answer('unchanged', old, at_of_old)
end
if running then
  redis.call('HSET', KEYS[4], key, text)
  emit(KEYS[7], maxlen, 'type', 'schedule-upserted', 'ids', old, 'key', key, 'outcome', outcome)
  return answer(outcome, old, at_of_old)
end
if redis.call('EXISTS', prefix .. id) == 1 then
  return redis.error_reply('EMQ_EXISTS ' .. id)
end
local planned = run_at
if where == 'waiting' and stored and same_spec(stored, def) then
  run_at, planned = old_at, tonumber(old_planned) or old_at
end

redis.call('HSET', KEYS[4], key, text)
if where == 'waiting' then
  redis.call('ZREM', KEYS[3], old)
  redis.call('DEL', prefix .. old)
  redis.call('HINCRBY', KEYS[6], 'removed', 1)
  emit(KEYS[7], maxlen, 'type', 'removed', 'ids', old, 'from', 'schedule')
end
write_occurrence(prefix, KEYS[3], id, def, key, run_at, planned, trace)
redis.call('HSET', KEYS[5], key, id)
redis.call('HINCRBY', KEYS[6], 'enqueued', 1)
emit(KEYS[7], maxlen, 'type', 'enqueued', 'ids', id)
emit(KEYS[7], maxlen, 'type', 'schedule-upserted', 'ids', id, 'key', key, 'outcome', outcome)
-- A blocked worker shortens its wait to the new run-at.
wake(KEYS[8])
return answer(outcome, id, run_at)
`,
);
