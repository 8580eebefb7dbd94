import { luaScript } from './prelude';

export const REMOVE_SCHEDULE_LUA = luaScript(
  `
-- remove-schedule: deletes a schedule's definition and its scheduler-next entry. Its next
-- occurrence goes too while it waits, in the schedule set or in its lane's pending set (the
-- lane leaves ready at that level when it has no work left there, as remove does); an
-- occurrence already active is left to finish (its advance then finds no schedule).
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] schedule   KEYS[4] schedulers
-- KEYS[5] scheduler-next   KEYS[6] metrics   KEYS[7] events
-- (lane pending sets are composed from the queue's base, see flow.ts)
-- ARGV[1] row prefix emq:{q}:job:   ARGV[2] schedule key   ARGV[3] events max length
-- ARGV[4] replay window ms
-- Returns: 1 removed, 0 there was no such schedule (nothing written); a repeated request
--          returns the first reply.
-- Events:  'removed' for the occurrence removed with it (from schedule or pending),
--          'schedule-removed' with that occurrence's id (none when it was running) and the key.
`,
  `
local prefix, key = ARGV[1], ARGV[2]
local maxlen = int_arg(3, 1, 1000000000)
local replay_ttl = int_arg(4, 1, 1000000000000)
local prior = replayed(KEYS[2])
if prior then return tonumber(prior) end
local had = redis.call('HEXISTS', KEYS[4], key) == 1
local next_id = redis.call('HGET', KEYS[5], key)
if not had and not next_id then return 0 end

redis.call('HDEL', KEYS[4], key)
redis.call('HDEL', KEYS[5], key)
local gone = ''
if next_id then
  local row = prefix .. next_id
  local from = false
  if redis.call('ZREM', KEYS[3], next_id) == 1 then
    from = 'schedule'
  else
    local f = redis.call('HMGET', row, 'l', 'y')
    local lane, level = place(f[1], f[2])
    if redis.call('ZREM', pending_key(level, lane), next_id) == 1 then
      drained(lane, level)
      from = 'pending'
    end
  end
  if from then
    redis.call('DEL', row)
    redis.call('HINCRBY', KEYS[6], 'removed', 1)
    emit(KEYS[7], maxlen, 'type', 'removed', 'ids', next_id, 'from', from)
    gone = next_id
  end
end
emit(KEYS[7], maxlen, 'type', 'schedule-removed', 'ids', gone, 'key', key)
record(KEYS[2], '1', replay_ttl)
return 1
`,
);
