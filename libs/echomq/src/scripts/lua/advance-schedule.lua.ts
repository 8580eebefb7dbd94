import { TRACE_CONTEXT_MAX_BYTES } from '../limits';
import { luaScript } from './prelude';
import { SCHEDULE_OCCURRENCE_LUA } from './schedule-occurrence.lua';

export const ADVANCE_SCHEDULE_LUA = luaScript(
  `
-- advance-schedule: compare-and-set of a schedule's next occurrence. Once the expected
-- occurrence was claimed (active, retrying, dead, finished) or is gone (removed, drained,
-- lost), creates the next one from the stored template and points scheduler-next at it.
-- Workers call it when they claim an occurrence, reapers when they find a next occurrence
-- claimed or gone without an advance; whichever comes first wins, the others read STALE. An
-- occurrence promoted but not claimed yet (pending) is not advanced from: it may still wait
-- long (a paused queue, busy workers), and each schedule has at most one unstarted occurrence.
-- A cron pattern with no run left (ARGV[6] 0) ends the schedule instead: its definition and
-- scheduler-next entry go, so no sweep looks at it again.
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] schedule   KEYS[4] schedulers
-- KEYS[5] scheduler-next   KEYS[6] metrics   KEYS[7] events   KEYS[8] wake
-- (lane pending sets are composed from the queue's base, see flow.ts)
-- ARGV[1] row prefix emq:{q}:job:   ARGV[2] schedule key   ARGV[3] expected current next id
-- ('' when the schedule has none)   ARGV[4] sha1 of the definition the run-at was computed
-- from   ARGV[5] id of the new occurrence   ARGV[6] its run-at (ms); 0: the pattern has no run
-- left (end the schedule; creates nothing, needs ARGV[7] 0)   ARGV[7] 1: replace the
-- expected occurrence, which must still wait in the schedule set never claimed (the 'skip'
-- policy drops an overdue one unrun); 0: the expected occurrence must have been claimed or
-- be gone (or be '')
-- ARGV[8] events max length   ARGV[9] replay window ms
-- ARGV[10] the expected occurrence's trace context as its claim read it ('' or absent: none; at
-- most ${TRACE_CONTEXT_MAX_BYTES} bytes), for when its row is gone (a completion not retained can beat the advance)
-- The new occurrence carries the trace context ('tc') of the expected one (its row's, else
-- ARGV[10]), when it has one: every occurrence of a schedule keeps its upsert's context.
-- Returns: 'OK' (advanced, or ended; also when scheduler-next already is the new id: a replay)
--          'STALE' (nothing written: the schedule is gone, its definition changed, its next
--          occurrence is not the expected one, or the expected one is not where ARGV[7] says;
--          a pending one is never where it says)
-- Errors:  EMQ_EXISTS <id> when the new id already has a row (nothing written).
-- Events:  'removed' (from schedule) for a replaced occurrence, 'enqueued' with the new id;
--          ended: 'schedule-removed' with no ids, the key and reason 'ended'.
`,
  `${SCHEDULE_OCCURRENCE_LUA}
local prefix, key, expected, digest, id = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local run_at = int_arg(6, 0, 1000000000000000)
local replace = int_arg(7, 0, 1) == 1
if run_at == 0 and replace then refuse('ARGV[6] 0 (no run left) takes ARGV[7] 0') end
local maxlen = int_arg(8, 1, 1000000000)
local replay_ttl = int_arg(9, 1, 1000000000000)
local claimed_trace = ARGV[10] or ''
if #claimed_trace > ${TRACE_CONTEXT_MAX_BYTES} then
  refuse('ARGV[10] must be a trace context of at most ${TRACE_CONTEXT_MAX_BYTES} bytes')
end
local prior = replayed(KEYS[2])
if prior then return prior end
local current = redis.call('HGET', KEYS[5], key)
if current == id then return 'OK' end
local stored = redis.call('HGET', KEYS[4], key)
if not stored or (current or '') ~= expected or redis.sha1hex(stored) ~= digest then
  return 'STALE'
end
local where = expected == '' and 'gone' or occurrence_at(prefix, KEYS[3], expected)
if where == 'pending' or replace ~= (where == 'waiting') then
  return 'STALE'
end
if run_at == 0 then
  redis.call('HDEL', KEYS[4], key)
  redis.call('HDEL', KEYS[5], key)
  emit(KEYS[7], maxlen, 'type', 'schedule-removed', 'ids', '', 'key', key, 'reason', 'ended')
  record(KEYS[2], 'OK', replay_ttl)
  return 'OK'
end
local def = decode_definition(stored, 'the stored definition')
if redis.call('EXISTS', prefix .. id) == 1 then
  return redis.error_reply('EMQ_EXISTS ' .. id)
end

local trace = expected ~= '' and redis.call('HGET', prefix .. expected, 'tc') or claimed_trace
if replace then
  redis.call('ZREM', KEYS[3], expected)
  redis.call('DEL', prefix .. expected)
  redis.call('HINCRBY', KEYS[6], 'removed', 1)
  emit(KEYS[7], maxlen, 'type', 'removed', 'ids', expected, 'from', 'schedule')
end
write_occurrence(prefix, KEYS[3], id, def, key, run_at, nil, trace)
redis.call('HSET', KEYS[5], key, id)
redis.call('HINCRBY', KEYS[6], 'enqueued', 1)
emit(KEYS[7], maxlen, 'type', 'enqueued', 'ids', id)
wake(KEYS[8])
record(KEYS[2], 'OK', replay_ttl)
return 'OK'
`,
);
