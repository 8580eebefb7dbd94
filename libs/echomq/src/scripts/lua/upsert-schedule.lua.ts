import { luaScript } from './prelude';
import { SCHEDULE_OCCURRENCE_LUA } from './schedule-occurrence.lua';

export const UPSERT_SCHEDULE_LUA = luaScript(
  `
-- upsert-schedule: writes a schedule's definition and makes sure it has exactly one next
-- occurrence waiting in the schedule set.
-- The same definition whose next occurrence still waits in the schedule set: 'unchanged',
-- nothing written. Otherwise the definition is written, the old next occurrence is removed
-- if it still waits in the schedule set (ZREM + DEL row), a new one is created from the
-- template (its id minted by the caller, its run-at computed by the caller from server time),
-- and scheduler-next points at it. An old occurrence that already left the schedule set
-- (pending or active: a current run) is left alone; its advance later finds itself stale.
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] schedule   KEYS[4] schedulers
-- KEYS[5] scheduler-next   KEYS[6] metrics   KEYS[7] events   KEYS[8] wake
-- ARGV[1] row prefix emq:{q}:job:   ARGV[2] schedule key   ARGV[3] definition (canonical JSON)
-- ARGV[4] id of the new occurrence   ARGV[5] its run-at (ms)   ARGV[6] events max length
-- ARGV[7] replay window ms
-- Returns: { 'created' | 'updated' | 'unchanged', id of the next occurrence, its run-at ms };
--          a repeated request returns the first reply.
-- Errors:  EMQ_EXISTS <id> when the new id already has a row (nothing written).
-- Events:  'removed' (from schedule) for a replaced occurrence, 'enqueued' with the new id,
--          'schedule-upserted' with the new id, key and outcome.
`,
  `${SCHEDULE_OCCURRENCE_LUA}
local prefix, key, text, id = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local run_at = int_arg(5, 1, 1000000000000000)
local maxlen = int_arg(6, 1, 1000000000)
local replay_ttl = int_arg(7, 1, 1000000000000)
local def = decode_definition(text, 'ARGV[3]')
local prior = replayed(KEYS[2])
if prior then
  local outcome, prior_id, prior_at = string.match(prior, '^(%S+) (%S+) (%S+)$')
  return { outcome, prior_id, tonumber(prior_at) }
end
local stored = redis.call('HGET', KEYS[4], key)
local old = redis.call('HGET', KEYS[5], key)
local old_at = old and redis.call('ZSCORE', KEYS[3], old)
if stored == text and old_at then
  return { 'unchanged', old, tonumber(old_at) }
end
if redis.call('EXISTS', prefix .. id) == 1 then
  return redis.error_reply('EMQ_EXISTS ' .. id)
end

local outcome = stored and 'updated' or 'created'
redis.call('HSET', KEYS[4], key, text)
if old_at then
  redis.call('ZREM', KEYS[3], old)
  redis.call('DEL', prefix .. old)
  redis.call('HINCRBY', KEYS[6], 'removed', 1)
  emit(KEYS[7], maxlen, 'type', 'removed', 'ids', old, 'from', 'schedule')
end
write_occurrence(prefix, KEYS[3], id, def, key, run_at)
redis.call('HSET', KEYS[5], key, id)
redis.call('HINCRBY', KEYS[6], 'enqueued', 1)
emit(KEYS[7], maxlen, 'type', 'enqueued', 'ids', id)
emit(KEYS[7], maxlen, 'type', 'schedule-upserted', 'ids', id, 'key', key, 'outcome', outcome)
-- A blocked worker shortens its wait to the new run-at.
wake(KEYS[8])
record(KEYS[2], outcome .. ' ' .. id .. ' ' .. run_at, replay_ttl)
return { outcome, id, run_at }
`,
);
