import { TRACE_CONTEXT_MAX_BYTES } from '../limits';
import { luaScript } from './prelude';

export const ENQUEUE_LUA = luaScript(
  `
-- enqueue: (new) -> pending, or -> schedule when the job runs later.
-- The jobs come in groups, one per caller merged into this call. A group is all or nothing
-- and has its own outcome: a group whose id exists is refused alone, the others go in.
-- Every group is planned (reads only) before the first write.
-- KEYS[1] fence (never exists; see keyspace)   KEYS[2] reply key of this request
-- KEYS[3] pending   KEYS[4] schedule   KEYS[5] metrics   KEYS[6] events   KEYS[7] wake
-- ARGV[1] row prefix emq:{q}:job:   ARGV[2] idempotency prefix emq:{q}:idem:
-- ARGV[3] events max length   ARGV[4] idempotency TTL ms   ARGV[5] replay window ms
-- ARGV[6] group count G   ARGV[7 .. 6+G] jobs in each group
-- then per job 12 values: id, data, name ('' none), max attempts ('' none: the serving
--           worker's applies), delay ms (0 none), run-at ms since epoch (0 none),
--           idempotency key ('' none), backoff policy as JSON ('' none: the serving worker's),
--           lane ('' the default lane), priority level 0-9 ('' 0), timeout ms ('' none: the
--           serving worker's), trace context ('' none; at most ${TRACE_CONTEXT_MAX_BYTES} bytes, kept as 'tc')
-- (a pending job goes to its lane's pending set at its level, and the lane is offered to the
--  claim: see flow.ts)
-- Returns: per group { 'OK', then per job: id, 1 created | 0 an idempotency key matched
--          (the id is then the existing job's) } or { 'EMQ_EXISTS', id } (nothing written for it).
--          A repeated request returns its first reply.
-- Event:   'enqueued' with the ids created.
`,
  `
local prefix, idem_prefix = ARGV[1], ARGV[2]
local maxlen = int_arg(3, 1, 1000000000)
local idem_ttl = int_arg(4, 1, 1000000000000)
local replay_ttl = int_arg(5, 1, 1000000000000)
local groups = int_arg(6, 1, BATCH_MAX)
local sizes, total = {}, 0
for g = 1, groups do
  sizes[g] = int_arg(6 + g, 1, BATCH_MAX)
  total = total + sizes[g]
end
local PER_JOB = 12
local first = 7 + groups
if total > BATCH_MAX or #ARGV ~= first - 1 + total * PER_JOB then
  refuse('expected ' .. total .. ' jobs of ' .. PER_JOB .. ' arguments (at most ' .. BATCH_MAX .. ')')
end
-- A stored backoff is read back by workers of any version: only a small object naming a
-- policy a row can hold (fixed or exponential; a function cannot be stored).
local function check_backoff(i)
  local text = ARGV[i]
  if text == '' then return end
  local ok, policy = false, nil
  if #text <= 256 then ok, policy = pcall(cjson.decode, text) end
  if not ok or type(policy) ~= 'table' or (policy.type ~= 'fixed' and policy.type ~= 'exponential') then
    refuse('ARGV[' .. i .. '] must be a fixed or exponential backoff policy as JSON (at most 256 bytes)')
  end
end
local function check_lane(i)
  local lane = ARGV[i]
  if lane ~= '' and (#lane > 64 or not string.match(lane, '^[%w_.:@+=-]+$')) then
    refuse('ARGV[' .. i .. '] must be a lane name (1 to 64 of A-Z a-z 0-9 _ . : @ + = -)')
  end
end
for i = 0, total - 1 do
  local base = first + i * PER_JOB
  if ARGV[base + 3] ~= '' then int_arg(base + 3, 1, 1000000) end
  int_arg(base + 4, 0, 1000000000000000)
  int_arg(base + 5, 0, 1000000000000000)
  check_backoff(base + 7)
  check_lane(base + 8)
  if ARGV[base + 9] ~= '' then int_arg(base + 9, 0, TOP_LEVEL) end
  if ARGV[base + 10] ~= '' then int_arg(base + 10, 1, 604800000) end
  if #ARGV[base + 11] > ${TRACE_CONTEXT_MAX_BYTES} then
    refuse('ARGV[' .. (base + 11) .. '] must be a trace context of at most ${TRACE_CONTEXT_MAX_BYTES} bytes')
  end
end

-- The reply of a repeated request, rebuilt from its record: created jobs carry their own
-- id (in ARGV), matched ones the id recorded for them.
local prior = replayed(KEYS[2])
if prior then
  -- 'all': every job was created (the common case, recorded without JSON)
  local rec = prior == 'all' and { m = {}, e = {} } or cjson.decode(prior)
  local out, job = {}, 0
  for g = 1, groups do
    local refused = rec.e[tostring(g)]
    if refused then
      out[g] = { 'EMQ_EXISTS', refused }
      job = job + sizes[g]
    else
      local reply = { 'OK' }
      for _ = 1, sizes[g] do
        job = job + 1
        local matched = rec.m[tostring(job)]
        reply[#reply + 1] = matched or ARGV[first + (job - 1) * PER_JOB]
        reply[#reply + 1] = matched and 0 or 1
      end
      out[g] = reply
    end
  end
  return out
end

-- Plan (reads only). Idempotency keys bind in call order, as if the groups ran one by one;
-- a refused group binds nothing.
local rows = {}
for i = 0, total - 1 do rows[#rows + 1] = prefix .. ARGV[first + i * PER_JOB] end
local any_row = exists_any(rows) -- one check for the whole call; per row only on a clash
local bound, taken = {}, {}
local out, fresh = {}, {}
local rec = { m = {}, e = {} }
local start = 0
for g = 1, groups do
  local reply, group_fresh, group_bound, group_taken, group_matched = { 'OK' }, {}, {}, {}, {}
  local clash = nil
  for job = start + 1, start + sizes[g] do
    local base = first + (job - 1) * PER_JOB
    local id, idem = ARGV[base], ARGV[base + 6]
    local existing = false
    if idem ~= '' then
      existing = group_bound[idem] or bound[idem] or redis.call('GET', idem_prefix .. idem)
    end
    if existing then
      reply[#reply + 1] = existing
      reply[#reply + 1] = 0
      group_matched[tostring(job)] = existing
    elseif taken[id] or group_taken[id] or (any_row and redis.call('EXISTS', prefix .. id) == 1) then
      clash = id
      break
    else
      group_taken[id] = true
      if idem ~= '' then group_bound[idem] = id end
      group_fresh[#group_fresh + 1] = base
      reply[#reply + 1] = id
      reply[#reply + 1] = 1
    end
  end
  if clash then
    out[g] = { 'EMQ_EXISTS', clash }
    rec.e[tostring(g)] = clash
  else
    for k, v in pairs(group_bound) do bound[k] = v end
    for k in pairs(group_taken) do taken[k] = true end
    for k, v in pairs(group_matched) do rec.m[k] = v end
    for _, base in ipairs(group_fresh) do fresh[#fresh + 1] = base end
    out[g] = reply
  end
  start = start + sizes[g]
end

-- Write.
local now = now_ms()
local ids = {}
-- Pending jobs by lane and level, in call order: one ZADD and one offer per group.
local waiting, order = {}, {}
for _, base in ipairs(fresh) do
  local id, name, idem = ARGV[base], ARGV[base + 2], ARGV[base + 6]
  local max, backoff = ARGV[base + 3], ARGV[base + 7]
  local lane, level = place(ARGV[base + 8] ~= '' and ARGV[base + 8] or nil, ARGV[base + 9])
  local timeout, trace = ARGV[base + 10], ARGV[base + 11]
  local delay, run_at = tonumber(ARGV[base + 4]), tonumber(ARGV[base + 5])
  local fields = {}
  put_data(fields, ARGV[base + 1])
  -- Only a job's own settings go on its row; without them the serving worker's apply (claim).
  put_own(fields, name, max, backoff, lane, level, timeout)
  if trace ~= '' then
    fields[#fields + 1] = 'tc'
    fields[#fields + 1] = trace
  end
  if idem ~= '' then
    fields[#fields + 1] = 'k'
    fields[#fields + 1] = idem
    redis.call('SET', idem_prefix .. idem, id, 'PX', idem_ttl)
  end
  redis.call('HSET', prefix .. id, unpack(fields))
  if run_at <= 0 and delay > 0 then run_at = now + delay end
  if run_at > now then
    redis.call('ZADD', KEYS[4], run_at, id)
  else
    local at = level .. ':' .. lane
    if not waiting[at] then
      waiting[at] = { lane = lane, level = level, ids = {} }
      order[#order + 1] = at
    end
    local group = waiting[at].ids
    group[#group + 1] = id
  end
  ids[#ids + 1] = id
end
for _, at in ipairs(order) do
  into_pending(waiting[at].lane, waiting[at].level, waiting[at].ids)
end

if #ids > 0 then
  redis.call('HINCRBY', KEYS[5], 'enqueued', #ids)
  emit(KEYS[6], maxlen, 'type', 'enqueued', 'ids', table.concat(ids, ','))
  -- Delayed jobs wake workers too, so a blocked worker shortens its wait to the new run-at.
  wake(KEYS[7])
end
-- A call that created nothing (every job matched its idempotency key, or was refused) writes
-- only its reply record: a full Redis lets that through, so a repeat of a key after a lost
-- reply is told its job, not REDIS_OUT_OF_MEMORY.
if #ids == 0 then runs_when_full() end
if next(rec.m) == nil and next(rec.e) == nil then
  record(KEYS[2], 'all', replay_ttl)
else
  record(KEYS[2], cjson.encode(rec), replay_ttl)
end
return out
`,
);
