import { luaScript } from './prelude';

export const CLAIM_LUA = luaScript(
  `
-- claim: pending -> active, up to N jobs, after promoting due scheduled jobs.
-- Each claimed job's attempts (the fencing token) goes up by one, and the claim
-- records a claimant unique to it (the caller's per-call id + the job's index).
-- KEYS[1] pending   KEYS[2] active   KEYS[3] schedule   KEYS[4] metrics   KEYS[5] events
-- KEYS[6] wake      KEYS[7] paused   KEYS[8] row prefix emq:{q}:job:
-- ARGV[1] N   ARGV[2] lease ms   ARGV[3] claimant prefix (unique per call)
-- ARGV[4] events max length   ARGV[5] most scheduled jobs to promote in this call
-- Returns: { next run-at in schedule (ms, -1 when none), lease deadline (ms),
--            then per claimed job: id, attempts, claimant, data, name, max attempts, budget base }
`,
  `
local now = now_ms()
local deadline = now + tonumber(ARGV[2])

local due = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, tonumber(ARGV[5]))
if #due > 0 then
  local members = {}
  for _, id in ipairs(due) do
    members[#members + 1] = 0
    members[#members + 1] = id
  end
  redis.call('ZADD', KEYS[1], unpack(members))
  redis.call('ZREM', KEYS[3], unpack(due))
  redis.call('HINCRBY', KEYS[4], 'promoted', #due)
  emit(KEYS[5], ARGV[4], 'type', 'promoted', 'ids', table.concat(due, ','))
end

local out = { -1, deadline }
local next_run = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
if next_run[2] then out[1] = tonumber(next_run[2]) end

if redis.call('EXISTS', KEYS[7]) == 1 then
  return out
end

local popped = redis.call('ZPOPMIN', KEYS[1], tonumber(ARGV[1]))
local ids, leases = {}, {}
local orphans = 0
for i = 1, #popped, 2 do
  local id = popped[i]
  local row = KEYS[8] .. id
  -- the payload's fields (see get_data), then n m b a
  local f = redis.call('HMGET', row, 'd', 'd2', 'd3', 'd4', 'dn', 'n', 'm', 'b', 'a')
  if f[1] then
    local claimant = ARGV[3] .. '.' .. #ids
    out[#out + 1] = id
    -- attempts + 1 and the claimant in one HSET (the script is atomic, so read-then-write is safe)
    local attempts = (tonumber(f[9]) or 0) + 1
    out[#out + 1] = attempts
    out[#out + 1] = claimant
    out[#out + 1] = get_data(row, f)
    out[#out + 1] = f[6]
    out[#out + 1] = f[7]
    out[#out + 1] = f[8]
    redis.call('HSET', row, 'a', attempts, 'c', claimant)
    ids[#ids + 1] = id
    leases[#leases + 1] = deadline
    leases[#leases + 1] = id
  else
    -- A member without a row breaks invariant 2; drop it rather than hand out an empty job.
    orphans = orphans + 1
  end
end

if #ids > 0 then
  redis.call('ZADD', KEYS[2], unpack(leases))
  redis.call('HINCRBY', KEYS[4], 'claimed', #ids)
  emit(KEYS[5], ARGV[4], 'type', 'claimed', 'ids', table.concat(ids, ','))
end
bump(KEYS[4], 'orphans', orphans)
-- Work is left: pass the wake token on to the next idle worker.
if #popped > 0 and redis.call('ZCARD', KEYS[1]) > 0 then
  wake(KEYS[6])
end
return out
`,
);
