import { ENQUEUE_MANY_MAX, TRACE_CONTEXT_MAX_BYTES } from '../limits';
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
-- ARGV[6] group count G   ARGV[7 .. 6+G] jobs in each group (at most ${ENQUEUE_MANY_MAX} jobs in all;
--         a longer call is refused before anything is written)
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
local ENQUEUE_MAX = ${ENQUEUE_MANY_MAX}
local PER_JOB = 12
-- ARGV is read tens of thousands of times in a call of ENQUEUE_MAX jobs: a local is cheaper
-- than the global.
local argv = ARGV
local prefix, idem_prefix = argv[1], argv[2]
local maxlen = int_arg(3, 1, 1000000000)
local idem_ttl = int_arg(4, 1, 1000000000000)
local replay_ttl = int_arg(5, 1, 1000000000000)
local groups = int_arg(6, 1, ENQUEUE_MAX)
local sizes, total = {}, 0
for g = 1, groups do
  sizes[g] = int_arg(6 + g, 1, ENQUEUE_MAX)
  total = total + sizes[g]
end
local first = 7 + groups
if total > ENQUEUE_MAX or #argv ~= first - 1 + total * PER_JOB then
  refuse('expected ' .. total .. ' jobs of ' .. PER_JOB .. ' arguments (at most ' .. ENQUEUE_MAX .. ')')
end
-- Most jobs carry none of these: each check is skipped on its value's "none" ('' or '0').
for base = first, first + (total - 1) * PER_JOB, PER_JOB do
  if argv[base + 3] ~= '' then int_arg(base + 3, 1, 1000000) end
  if argv[base + 4] ~= '0' then int_arg(base + 4, 0, 1000000000000000) end
  if argv[base + 5] ~= '0' then int_arg(base + 5, 0, 1000000000000000) end
  if argv[base + 7] ~= '' then check_backoff(base + 7) end
  if argv[base + 8] ~= '' then check_lane(base + 8) end
  if argv[base + 9] ~= '' then int_arg(base + 9, 0, TOP_LEVEL) end
  if argv[base + 10] ~= '' then int_arg(base + 10, 1, 604800000) end
  if #argv[base + 11] > ${TRACE_CONTEXT_MAX_BYTES} then
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
        reply[#reply + 1] = matched or argv[first + (job - 1) * PER_JOB]
        reply[#reply + 1] = matched and 0 or 1
      end
      out[g] = reply
    end
  end
  return out
end

-- Plan (reads only). Idempotency keys bind in call order, as if the groups ran one by one;
-- a refused group binds nothing: what it took is given back when it clashes.
local rows = {}
for j = 1, total do rows[j] = prefix .. argv[first + (j - 1) * PER_JOB] end
local any_row = exists_any(rows) -- one check for the whole call; per row only on a clash
local taken, bound = {}, {} -- the ids and idempotency keys the groups so far took
local out, fresh, made = {}, {}, 0 -- fresh[1 .. made]: the jobs to create, by their place j
local rec = { m = {}, e = {} }
local start = 0
for g = 1, groups do
  -- (counters, not #: a length is a search, and these lists grow by one per job)
  local reply, r, mark, clash, matched, keys = { 'OK' }, 1, made, nil, nil, nil
  for j = start + 1, start + sizes[g] do
    local base = first + (j - 1) * PER_JOB
    local id, idem = argv[base], argv[base + 6]
    local existing = false
    if idem ~= '' then existing = bound[idem] or redis.call('GET', idem_prefix .. idem) end
    if existing then
      reply[r + 1], reply[r + 2], r = existing, 0, r + 2
      matched = matched or {}
      matched[tostring(j)] = existing
    elseif taken[id] or (any_row and redis.call('EXISTS', rows[j]) == 1) then
      clash = id
      break
    else
      taken[id] = true
      if idem ~= '' then
        bound[idem] = id
        keys = keys or {}
        keys[#keys + 1] = idem
      end
      made = made + 1
      fresh[made] = j
      reply[r + 1], reply[r + 2], r = id, 1, r + 2
    end
  end
  if clash then
    for k = made, mark + 1, -1 do
      taken[argv[first + (fresh[k] - 1) * PER_JOB]] = nil
      fresh[k] = nil
    end
    made = mark
    for _, idem in ipairs(keys or {}) do bound[idem] = nil end
    out[g] = { 'EMQ_EXISTS', clash }
    rec.e[tostring(g)] = clash
  else
    for k, v in pairs(matched or {}) do rec.m[k] = v end
    out[g] = reply
  end
  start = start + sizes[g]
end

-- Write.
local now = now_ms()
local ids = {}
-- One HSET list for every job with settings of its own, reused: n says how much is the job's.
local fields, n = {}, 0
-- Pending jobs by level and lane: one ZADD and one offer per lane and level, offered in the
-- order the call first names them (a held lane notes its levels in that order). Most jobs
-- have neither (the default lane at level 0): their list is at hand, without the lookups.
local plain, np, order = {}, 0, {}
local waiting = { [0] = { [DEFAULT_LANE] = plain } }
for k = 1, made do
  local j = fresh[k]
  local base = first + (j - 1) * PER_JOB
  local id, name, max, idem = argv[base], argv[base + 2], argv[base + 3], argv[base + 6]
  local backoff, lane_arg, level_arg = argv[base + 7], argv[base + 8], argv[base + 9]
  local timeout, trace = argv[base + 10], argv[base + 11]
  local lane, level = DEFAULT_LANE, 0
  if lane_arg ~= '' or level_arg ~= '' then lane, level = place(lane_arg ~= '' and lane_arg or nil, level_arg) end
  ids[k] = id
  if name == '' and max == '' and idem == '' and backoff == '' and timeout == '' and trace == ''
      and lane == DEFAULT_LANE and level == 0 then
    -- The common row: its payload alone.
    put_row_data(rows[j], argv[base + 1])
  else
    n = put_data(fields, argv[base + 1], 0)
    -- Only a job's own settings go on its row; without them the serving worker's apply (claim).
    n = put_own(fields, name, max, backoff, lane, level, timeout, n)
    if trace ~= '' then fields[n + 1], fields[n + 2], n = 'tc', trace, n + 2 end
    if idem ~= '' then
      fields[n + 1], fields[n + 2], n = 'k', idem, n + 2
      redis.call('SET', idem_prefix .. idem, id, 'PX', idem_ttl)
    end
    redis.call('HSET', rows[j], unpack(fields, 1, n))
  end
  local run_at = argv[base + 5] ~= '0' and tonumber(argv[base + 5]) or 0
  if run_at <= 0 and argv[base + 4] ~= '0' then run_at = now + tonumber(argv[base + 4]) end
  if run_at > now then
    redis.call('ZADD', KEYS[4], run_at, id)
  elseif lane == DEFAULT_LANE and level == 0 then
    if np == 0 then order[#order + 1] = { DEFAULT_LANE, 0 } end
    np = np + 1
    plain[np] = id
  else
    local lanes = waiting[level]
    if not lanes then
      lanes = {}
      waiting[level] = lanes
    end
    local group = lanes[lane]
    if not group then
      group = {}
      lanes[lane] = group
      order[#order + 1] = { lane, level }
    end
    group[#group + 1] = id
  end
end
for _, at in ipairs(order) do
  into_pending(at[1], at[2], waiting[at[2]][at[1]])
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
