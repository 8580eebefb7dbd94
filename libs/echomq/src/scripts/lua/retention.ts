/**
 * Lua helpers for ids by time and for the dead set's retention, included by luaScript after
 * the prelude (whose helpers they use) when a script's body calls them: the cutoff id of an
 * instant (clean, the age trim) and the insert into dead that trims it in the same step.
 */
import { BASE62_ALPHABET, BASE62_WIDTH } from '../../ids/base62';
import { JOB_IDS } from '../../ids/branded-id';
import { NODE_BITS, SEQUENCE_BITS, SNOWFLAKE_EPOCH_MS } from '../../ids/snowflake';
import { DEAD_RETENTION_RANGES, DEAD_TRIM_MAX } from '../dead-retention';

export const RETENTION_PRELUDE = `
-- The smallest job id minted at Unix ms t (node 0, sequence 0). Ids compare byte-wise in mint
-- order, so an id is older than t exactly when it sorts before this one. Two 32-bit limbs in
-- doubles, as ids/base62.ts encodes: every step stays below 62 * 2^32 < 2^53, so it is exact.
local ID_BRAND, ID_WIDTH, ID_EPOCH = '${JOB_IDS.brand}', ${BASE62_WIDTH}, ${SNOWFLAKE_EPOCH_MS}
local B62 = '${BASE62_ALPHABET}'
local function first_id_at(t)
  local ms = math.max(t - ID_EPOCH, 0)
  local hi, lo = math.floor(ms / ${2 ** (32 - NODE_BITS - SEQUENCE_BITS)}), (ms % ${2 ** (32 - NODE_BITS - SEQUENCE_BITS)}) * ${2 ** (NODE_BITS + SEQUENCE_BITS)}
  local digits = {}
  for i = ID_WIDTH, 1, -1 do
    local hi_rem = hi % 62
    hi = (hi - hi_rem) / 62
    local rest = hi_rem * 4294967296 + lo
    local lo_rem = rest % 62
    lo = (rest - lo_rem) / 62
    digits[i] = string.sub(B62, lo_rem + 1, lo_rem + 1)
  end
  return ID_BRAND .. table.concat(digits)
end

-- The dead set's limits from ARGV[i] (most jobs kept) and ARGV[i + 1] (most age since enqueue,
-- ms; 0 for none), checked before the first write like every argument.
local DEAD_TRIM_MAX = ${DEAD_TRIM_MAX}
local function dead_limits(i)
  local cap = int_arg(i, ${DEAD_RETENTION_RANGES.deadMaxJobs.min}, ${DEAD_RETENTION_RANGES.deadMaxJobs.max})
  local max_age = int_arg(i + 1, 0, ${DEAD_RETENTION_RANGES.deadMaxAgeMs.max})
  return { cap = cap, max_age = max_age }
end

-- Puts ids into dead and trims it in the same step (Sidekiq's morgue): the oldest first (dead
-- is scored 0, so ZPOPMIN pops in mint order) while dead holds more than limits.cap, or while
-- they were enqueued more than limits.max_age ms before now. At most #ids + DEAD_TRIM_MAX go
-- per call, so a lowered cap converges over a few inserts and a full set stays at its cap. A
-- trimmed job's row goes, with its idempotency key when that still points at it (as remove).
-- Rows and idempotency keys are composed from the dead key's base (<base>dead). Bumps
-- 'trimmed' and emits 'trimmed' with the ids; returns how many were trimmed.
local function into_dead(dead, metrics, events, maxlen, ids, limits, now)
  zadd_all(dead, 0, ids)
  local over = redis.call('ZCARD', dead) - limits.cap
  local old = 0
  if limits.max_age > 0 then
    old = redis.call('ZLEXCOUNT', dead, '-', '(' .. first_id_at(now - limits.max_age))
  end
  local n = math.min(#ids + DEAD_TRIM_MAX, math.max(over, old))
  if n <= 0 then return 0 end
  local base = string.sub(dead, 1, #dead - 4)
  local popped = redis.call('ZPOPMIN', dead, n)
  local trimmed = {}
  for i = 1, #popped, 2 do
    local id = popped[i]
    local row = base .. 'job:' .. id
    local idem = redis.call('HGET', row, 'k')
    if idem and redis.call('GET', base .. 'idem:' .. idem) == id then
      redis.call('DEL', base .. 'idem:' .. idem)
    end
    redis.call('DEL', row)
    trimmed[#trimmed + 1] = id
  end
  bump(metrics, 'trimmed', #trimmed)
  emit(events, maxlen, 'type', 'trimmed', 'ids', table.concat(trimmed, ','))
  return #trimmed
end
`;
