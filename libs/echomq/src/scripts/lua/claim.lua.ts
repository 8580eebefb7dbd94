import { luaScript } from './prelude';

export const CLAIM_LUA = luaScript(
  `
-- claim: pending -> active, up to N jobs, after promoting due scheduled jobs.
-- Each claimed job's attempts (the fencing token) goes up by one, and the claim
-- records a claimant unique to it (the caller's per-call prefix + the job's index).
-- The prefix is the request id: a claim repeated with the same prefix (its reply was lost)
-- returns the jobs the first call claimed, still held by it, and claims nothing more.
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] pending   KEYS[4] active
-- KEYS[5] schedule   KEYS[6] metrics   KEYS[7] events   KEYS[8] wake   KEYS[9] paused
-- ARGV[1] row prefix emq:{q}:job:   ARGV[2] N   ARGV[3] lease ms   ARGV[4] claimant prefix
-- ARGV[5] events max length   ARGV[6] most scheduled jobs to promote in this call
-- ARGV[7] replay window ms   ARGV[8] the claiming worker's max attempts per budget, recorded
-- as 'w' on each claimed row that has no 'm' of its own (fail and reap then decide by it)
-- Returns: { next run-at in schedule (ms, -1 when none), lease deadline (ms),
--            then per claimed job: id, attempts, claimant, data, name, max attempts (the
--            job's own, else ARGV[8]), budget base, its own backoff as JSON (nil when none) }
-- Record:  the lease deadline; every job of one claim has it as its score in active.
`,
  `
local prefix, claimant_prefix = ARGV[1], ARGV[4]
local n = int_arg(2, 1, BATCH_MAX)
local lease = int_arg(3, 1, 1000000000)
local maxlen = int_arg(5, 1, 1000000000)
local promote_limit = int_arg(6, 0, BATCH_MAX)
local replay_ttl = int_arg(7, 1, 1000000000000)
local worker_max = int_arg(8, 1, 1000000)
local now = now_ms()

local function next_run_at()
  local next_run = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
  return next_run[2] and tonumber(next_run[2]) or -1
end

-- One claimed job's part of the reply, from its row read with
-- HMGET d d2 d3 d4 dn n m b a o ... (f[1] .. f[10]).
local function describe(out, id, row, f, attempts, claimant, max)
  out[#out + 1] = id
  out[#out + 1] = attempts
  out[#out + 1] = claimant
  out[#out + 1] = get_data(row, f)
  out[#out + 1] = f[6]
  out[#out + 1] = max
  out[#out + 1] = f[8]
  out[#out + 1] = f[10]
end

local prior = replayed(KEYS[2])
if prior then
  local deadline = tonumber(prior)
  local out = { next_run_at(), deadline }
  local mine = claimant_prefix .. '.'
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], deadline, deadline)) do
    local row = prefix .. id
    local f = redis.call('HMGET', row, 'd', 'd2', 'd3', 'd4', 'dn', 'n', 'm', 'b', 'a', 'o', 'c', 'w')
    local held_by = f[11]
    -- exactly <prefix>.<index>: a prefix may itself contain dots ('p' must not match 'p.1.0')
    if held_by and string.sub(held_by, 1, #mine) == mine and string.match(string.sub(held_by, #mine + 1), '^%d+$') then
      describe(out, id, row, f, tonumber(f[9]), held_by, budget(f[7], f[12] or worker_max))
    end
  end
  return out
end

local deadline = now + lease
local due = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now, 'LIMIT', 0, promote_limit)
if #due > 0 then
  zadd_all(KEYS[3], 0, due)
  zrem_all(KEYS[5], due)
  redis.call('HINCRBY', KEYS[6], 'promoted', #due)
  emit(KEYS[7], maxlen, 'type', 'promoted', 'ids', table.concat(due, ','))
end

local out = { next_run_at(), deadline }
record(KEYS[2], deadline, replay_ttl)
if redis.call('EXISTS', KEYS[9]) == 1 then
  return out
end

local popped = redis.call('ZPOPMIN', KEYS[3], n)
local ids = {}
local orphans = 0
for i = 1, #popped, 2 do
  local id = popped[i]
  local row = prefix .. id
  -- the payload's fields (see get_data), then n m b a o
  local f = redis.call('HMGET', row, 'd', 'd2', 'd3', 'd4', 'dn', 'n', 'm', 'b', 'a', 'o')
  if f[1] then
    local claimant = claimant_prefix .. '.' .. #ids
    -- attempts + 1 and the claimant in one HSET (the script is atomic, so read-then-write is safe)
    local attempts = (tonumber(f[9]) or 0) + 1
    describe(out, id, row, f, attempts, claimant, budget(f[7], worker_max))
    if f[7] then
      redis.call('HSET', row, 'a', attempts, 'c', claimant)
    else
      -- No budget of its own: this claim's worker decides it, the last claim's configuration winning.
      redis.call('HSET', row, 'a', attempts, 'c', claimant, 'w', worker_max)
    end
    ids[#ids + 1] = id
  else
    -- A member without a row breaks invariant 2; drop it rather than hand out an empty job.
    orphans = orphans + 1
  end
end

if #ids > 0 then
  zadd_all(KEYS[4], deadline, ids)
  redis.call('HINCRBY', KEYS[6], 'claimed', #ids)
  emit(KEYS[7], maxlen, 'type', 'claimed', 'ids', table.concat(ids, ','))
end
bump(KEYS[6], 'orphans', orphans)
-- Work is left: pass the wake token on to the next idle worker.
if #popped > 0 and redis.call('ZCARD', KEYS[3]) > 0 then
  wake(KEYS[8])
end
return out
`,
);
