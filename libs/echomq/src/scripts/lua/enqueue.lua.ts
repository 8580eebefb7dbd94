import { luaScript } from './prelude';

export const ENQUEUE_LUA = luaScript(
  `
-- enqueue: (new) -> pending, or -> schedule when the job runs later.
-- Validates the whole batch before writing anything, so a batch is all or nothing.
-- KEYS[1] pending   KEYS[2] schedule   KEYS[3] metrics   KEYS[4] events   KEYS[5] wake
-- KEYS[6] row prefix emq:{q}:job:     KEYS[7] idempotency prefix emq:{q}:idem:
-- ARGV[1] events max length   ARGV[2] idempotency TTL ms   ARGV[3] job count N
-- ARGV[4..] N groups of 7: id, data, name ('' none), max attempts, delay ms (0 none),
--           run-at ms since epoch (0 none), idempotency key ('' none)
-- Returns: flat array, per job: id, 1 when created or 0 when an idempotency key matched
--          (the id is then the existing job's id).
-- Errors:  EMQ_EXISTS <id> when a row with that id exists (nothing is written).
`,
  `
local now = now_ms()
local count = tonumber(ARGV[3])
local out, fresh, rows, seen_ids, seen_keys = {}, {}, {}, {}, {}

for i = 0, count - 1 do
  local base = 4 + i * 7
  local id, idem = ARGV[base], ARGV[base + 6]
  local existing = false
  if idem ~= '' then
    existing = seen_keys[idem] or redis.call('GET', KEYS[7] .. idem)
  end
  if existing then
    out[#out + 1] = existing
    out[#out + 1] = 0
  else
    if seen_ids[id] then
      return redis.error_reply('EMQ_EXISTS ' .. id)
    end
    seen_ids[id] = true
    if idem ~= '' then seen_keys[idem] = id end
    fresh[#fresh + 1] = base
    rows[#rows + 1] = KEYS[6] .. id
    out[#out + 1] = id
    out[#out + 1] = 1
  end
end

-- One EXISTS for the whole batch; only on a clash find which id it was.
if #rows > 0 and redis.call('EXISTS', unpack(rows)) > 0 then
  for i, row in ipairs(rows) do
    if redis.call('EXISTS', row) == 1 then
      return redis.error_reply('EMQ_EXISTS ' .. ARGV[fresh[i]])
    end
  end
end

local ids, pending = {}, {}
for _, base in ipairs(fresh) do
  local id, name, idem = ARGV[base], ARGV[base + 2], ARGV[base + 6]
  local delay, run_at = tonumber(ARGV[base + 4]), tonumber(ARGV[base + 5])
  local fields = { 'm', ARGV[base + 3] }
  put_data(fields, ARGV[base + 1])
  if name ~= '' then
    fields[#fields + 1] = 'n'
    fields[#fields + 1] = name
  end
  if idem ~= '' then
    fields[#fields + 1] = 'k'
    fields[#fields + 1] = idem
    redis.call('SET', KEYS[7] .. idem, id, 'PX', ARGV[2])
  end
  redis.call('HSET', KEYS[6] .. id, unpack(fields))
  if run_at <= 0 and delay > 0 then run_at = now + delay end
  if run_at > now then
    redis.call('ZADD', KEYS[2], run_at, id)
  else
    pending[#pending + 1] = 0
    pending[#pending + 1] = id
  end
  ids[#ids + 1] = id
end
if #pending > 0 then
  redis.call('ZADD', KEYS[1], unpack(pending))
end

if #ids > 0 then
  redis.call('HINCRBY', KEYS[3], 'enqueued', #ids)
  emit(KEYS[4], ARGV[1], 'type', 'enqueued', 'ids', table.concat(ids, ','))
  -- Delayed jobs wake workers too, so a blocked worker shortens its wait to the new run-at.
  wake(KEYS[5])
end
return out
`,
);
